/* The C ABI of trusted host-kernel plugins: a shared object that exports
 * accord_plugin_query() and describes its kernels. Standalone on purpose: it includes
 * only C headers so a plugin can be built by any compiler without Accord's sources.
 *
 * Trust: a plugin runs inside the daemon with its privileges. Load only code you trust.
 * Versioning: structs carry a _v1 suffix; reserved words let them grow without a bump.
 */
#ifndef ACCORD_PLUGIN_ABI_H_
#define ACCORD_PLUGIN_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCORD_PLUGIN_ABI_VERSION 1u

/* Which sanitizer runtime the plugin was built with; the host device refuses a plugin
 * whose sanitizer differs from its own, since mixing runtimes crashes at load. */
typedef enum accord_plugin_sanitizer_t {
  ACCORD_PLUGIN_SANITIZER_NONE = 0,
  ACCORD_PLUGIN_SANITIZER_ADDRESS = 1, /* ASan + UBSan */
  ACCORD_PLUGIN_SANITIZER_THREAD = 2,
} accord_plugin_sanitizer_t;

typedef enum accord_plugin_access_t {
  ACCORD_PLUGIN_ACCESS_READ = 0,
  ACCORD_PLUGIN_ACCESS_WRITE = 1,
  ACCORD_PLUGIN_ACCESS_READ_WRITE = 2,
} accord_plugin_access_t;

/* Return codes of a kernel's run function. Anything other than OK is a native failure:
 * Accord poisons the allocations of the graph and reports Execution. */
#define ACCORD_PLUGIN_OK 0
#define ACCORD_PLUGIN_FAILED 1

/* What a kernel declares about one of its buffer arguments. */
typedef struct accord_plugin_binding_info_v1_t {
  uint32_t access;      /* accord_plugin_access_t */
  uint32_t alignment;   /* minimum offset alignment the code needs; power of two */
} accord_plugin_binding_info_v1_t;

/* One bound buffer at run time: host address and the view's length in bytes. */
typedef struct accord_plugin_buffer_v1_t {
  void* data;
  size_t bytes;
} accord_plugin_buffer_v1_t;

/* Runs the kernel synchronously on the calling worker thread. `message` (capacity
 * `message_capacity`, may be 0) receives a NUL-terminated reason on failure. */
typedef int32_t (*accord_plugin_run_v1_fn)(const accord_plugin_buffer_v1_t* buffers,
                                           uint32_t buffer_count, const void* constants,
                                           size_t constant_bytes, char* message,
                                           size_t message_capacity);

typedef struct accord_plugin_kernel_v1_t {
  const char* name;                                /* unique within the plugin */
  uint32_t binding_count;
  const accord_plugin_binding_info_v1_t* bindings; /* binding_count entries */
  size_t constant_bytes;                           /* exact size of the constant block */
  accord_plugin_run_v1_fn run;
  uint64_t reserved[4];                            /* zero */
} accord_plugin_kernel_v1_t;

typedef struct accord_plugin_header_v1_t {
  uint32_t version;     /* ACCORD_PLUGIN_ABI_VERSION the plugin implements */
  uint32_t features;    /* zero; reserved for optional capabilities */
  uint32_t sanitizer;   /* accord_plugin_sanitizer_t */
  uint32_t kernel_count;
  const accord_plugin_kernel_v1_t* kernels;
  uint64_t reserved[8]; /* zero */
} accord_plugin_header_v1_t;

/* The one exported entry point. Returns a header for a version <= max_version that
 * lives as long as the library stays loaded, or NULL if none is supported. */
typedef const accord_plugin_header_v1_t* (*accord_plugin_query_fn)(uint32_t max_version);
#define ACCORD_PLUGIN_QUERY_SYMBOL "accord_plugin_query"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCORD_PLUGIN_ABI_H_ */
