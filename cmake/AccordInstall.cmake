# Install rules and the CMake package, so another project can
#   find_package(accord REQUIRED)
#   target_link_libraries(app PRIVATE accord::client)
# libaccord is static; the internal archives it needs (engine, the device composition
# root and every backend built, protocol) are installed beside it and reached only
# through its link interface.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_accord_exported accord_client accord_api accord_defaults accord_engine accord_devices accord_devices_common accord_devices_all
                     accord_npu_emulator_env)
foreach(backend ${ACCORD_DEVICE_BACKENDS})
  list(APPEND _accord_exported accord_devices_${backend})
endforeach()
if(ACCORD_BUILD_DAEMON)
  # accord_executor: RuntimeOptions::gpu_executor drives GPUs from executor processes.
  list(APPEND _accord_exported accord_proto accord_wire accord_executor)
endif()
foreach(t ${_accord_exported})
  string(REGEX REPLACE "^accord_" "" _name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${_name})
endforeach()

install(TARGETS ${_accord_exported} EXPORT accordTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The NPU emulator driver (RuntimeOptions::npu_emulator, accordd --npu-emulator), found
# installed in the library directory when the build tree's copy is gone.
if(TARGET accord_npu_emulator)
  install(TARGETS accord_npu_emulator LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY client/include/accord DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT accordTargets NAMESPACE accord:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/accord)

configure_package_config_file(cmake/accordConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/accordConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/accord)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/accordConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/accordConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/accordConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/accord)
