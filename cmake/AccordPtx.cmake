# GPU code built by nvcc at build time and embedded in a C++ target, for the examples
# and the [gpu] tests. nvcc is optional: without it, the embedded image is empty and the
# program says "nvcc was not found when this was built" (a GPU test then skips).
#
#   accord_embed_cuda(<target> SOURCE <file.cu> SYMBOL <c_name> [ARCH compute_75] [CUBIN sm_80])
#
# compiles <file.cu> to PTX for ARCH (or, with CUBIN, a cubin for that SM) and adds a
# generated .cpp defining
#   extern const unsigned char <c_name>[];  extern const unsigned long <c_name>_size;
# (size 0 when nvcc is absent) to <target>.
find_program(ACCORD_NVCC nvcc HINTS ${ACCORD_CUDA_INCLUDE_DIR}/../bin /usr/local/cuda/bin)
set(ACCORD_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/AccordEmbedFile.cmake)

function(accord_embed_cuda target)
  cmake_parse_arguments(ARG "" "SOURCE;SYMBOL;ARCH;CUBIN" "" ${ARGN})
  if(NOT ARG_ARCH)
    set(ARG_ARCH compute_75)
  endif()
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/${ARG_SYMBOL}.cpp)
  if(ACCORD_NVCC)
    if(ARG_CUBIN)
      set(image ${CMAKE_CURRENT_BINARY_DIR}/${ARG_SYMBOL}.cubin)
      set(mode -cubin -arch=${ARG_CUBIN})
    else()
      set(image ${CMAKE_CURRENT_BINARY_DIR}/${ARG_SYMBOL}.ptx)
      set(mode -ptx -arch=${ARG_ARCH})
    endif()
    add_custom_command(
      OUTPUT ${generated}
      COMMAND ${ACCORD_NVCC} ${mode} -o ${image} ${ARG_SOURCE}
      COMMAND ${CMAKE_COMMAND} -DINPUT=${image} -DOUTPUT=${generated} -DSYMBOL=${ARG_SYMBOL} -P ${ACCORD_EMBED_SCRIPT}
      DEPENDS ${ARG_SOURCE} ${ACCORD_EMBED_SCRIPT}
      COMMENT "nvcc: ${ARG_SYMBOL} from ${ARG_SOURCE}"
      VERBATIM)
  else()
    add_custom_command(
      OUTPUT ${generated}
      COMMAND ${CMAKE_COMMAND} -DINPUT= -DOUTPUT=${generated} -DSYMBOL=${ARG_SYMBOL} -P ${ACCORD_EMBED_SCRIPT}
      DEPENDS ${ACCORD_EMBED_SCRIPT}
      COMMENT "nvcc not found: ${ARG_SYMBOL} is empty"
      VERBATIM)
  endif()
  target_sources(${target} PRIVATE ${generated})
endfunction()
