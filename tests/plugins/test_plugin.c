/* Test-only host-kernel plugin: test.scale_f32, test.fail and test.sleep_us, written
 * against nothing but accord/plugin_abi.h, as a third-party plugin would be. Built
 * twice: accord_test_plugin declares the build's sanitizer, accord_test_plugin_badsan
 * a wrong one, so tests can check that the host device refuses it. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "accord/plugin_abi.h"

#ifndef ACCORD_TEST_PLUGIN_SANITIZER
#define ACCORD_TEST_PLUGIN_SANITIZER ACCORD_BUILD_SANITIZER
#endif

/* test.sleep_us writes this to the first 4 bytes of its binding once it has slept. */
#define ACCORD_TEST_SLEEP_MARKER 0x5EE9D0E5u

#if defined(__GNUC__)
#define ACCORD_TEST_EXPORT __attribute__((visibility("default")))
#else
#define ACCORD_TEST_EXPORT
#endif

static void set_message(char* message, size_t capacity, const char* text) {
  if (capacity > 0) snprintf(message, capacity, "%s", text);
}

/* test.scale_f32: out[i] = in[i] * factor. Constants: float factor, uint32 count. */
static int32_t run_scale_f32(const accord_plugin_buffer_v1_t* buffers, uint32_t buffer_count,
                             const void* constants, size_t constant_bytes, char* message,
                             size_t message_capacity) {
  float factor;
  uint32_t count;
  if (buffer_count != 2 || constant_bytes != 8) {
    set_message(message, message_capacity, "test.scale_f32: bad arguments");
    return ACCORD_PLUGIN_FAILED;
  }
  memcpy(&factor, constants, sizeof(factor));
  memcpy(&count, (const char*)constants + 4, sizeof(count));
  if (buffers[0].bytes < (size_t)count * 4 || buffers[1].bytes < (size_t)count * 4) {
    set_message(message, message_capacity, "test.scale_f32: buffers shorter than count");
    return ACCORD_PLUGIN_FAILED;
  }
  {
    const float* in = (const float*)buffers[0].data;
    float* out = (float*)buffers[1].data;
    uint32_t i;
    for (i = 0; i < count; ++i) out[i] = in[i] * factor;
  }
  return ACCORD_PLUGIN_OK;
}

/* test.fail: always fails, to exercise the error path. */
static int32_t run_fail(const accord_plugin_buffer_v1_t* buffers, uint32_t buffer_count,
                        const void* constants, size_t constant_bytes, char* message,
                        size_t message_capacity) {
  (void)buffers;
  (void)buffer_count;
  (void)constants;
  (void)constant_bytes;
  set_message(message, message_capacity, "injected failure");
  return ACCORD_PLUGIN_FAILED;
}

/* test.sleep_us: sleeps for the microseconds in its constants, then writes the marker. */
static int32_t run_sleep_us(const accord_plugin_buffer_v1_t* buffers, uint32_t buffer_count,
                            const void* constants, size_t constant_bytes, char* message,
                            size_t message_capacity) {
  uint32_t microseconds;
  uint32_t marker = ACCORD_TEST_SLEEP_MARKER;
  struct timespec left;
  if (buffer_count != 1 || constant_bytes != 4 || buffers[0].bytes < 4) {
    set_message(message, message_capacity, "test.sleep_us: bad arguments");
    return ACCORD_PLUGIN_FAILED;
  }
  memcpy(&microseconds, constants, sizeof(microseconds));
  left.tv_sec = (time_t)(microseconds / 1000000u);
  left.tv_nsec = (long)(microseconds % 1000000u) * 1000L;
  while (nanosleep(&left, &left) != 0) {
    if (errno != EINTR) {
      set_message(message, message_capacity, "test.sleep_us: nanosleep failed");
      return ACCORD_PLUGIN_FAILED;
    }
  }
  memcpy(buffers[0].data, &marker, sizeof(marker));
  return ACCORD_PLUGIN_OK;
}

static const accord_plugin_binding_info_v1_t kScaleBindings[] = {
    {ACCORD_PLUGIN_ACCESS_READ, 4},
    {ACCORD_PLUGIN_ACCESS_WRITE, 4},
};
static const accord_plugin_binding_info_v1_t kOneReadWrite[] = {
    {ACCORD_PLUGIN_ACCESS_READ_WRITE, 4},
};

static const accord_plugin_kernel_v1_t kKernels[] = {
    {"test.scale_f32", 2, kScaleBindings, 8, run_scale_f32, {0}},
    {"test.fail", 1, kOneReadWrite, 0, run_fail, {0}},
    {"test.sleep_us", 1, kOneReadWrite, 4, run_sleep_us, {0}},
};

static const accord_plugin_header_v1_t kHeader = {
    ACCORD_PLUGIN_ABI_VERSION,
    0,
    ACCORD_TEST_PLUGIN_SANITIZER,
    sizeof(kKernels) / sizeof(kKernels[0]),
    kKernels,
    {0},
};

ACCORD_TEST_EXPORT const accord_plugin_header_v1_t* accord_plugin_query(uint32_t max_version) {
  return max_version >= 1u ? &kHeader : NULL;
}
