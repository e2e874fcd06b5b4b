// A fake GPU backend ("fake") for testing GPU executors without a GPU: a Device of kind
// Gpu whose GpuLocal memory is memfd pages, which admits host-mapped memfd memory and
// another fake GPU's memory by its exported fd (mapping it, as CUDA imports it), waits
// natively, and runs a few built-in kernels on two worker threads. Some kernels misbehave
// on purpose: "fake.die" ends the process, "fake.fault" makes the device lost as a sticky
// CUDA error does. Thread-safety: every member is thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "daemon/devices/backend_catalog.h"
#include "daemon/devices/device.h"

namespace accord::testing {

// Kernels (CodeImage::name, Builtin):
//   fake.add_one   bindings (write u32[n], read u32[n]): dst[i] = src[i] + 1
//   fake.add_f32   bindings (read f32[n], read f32[n], write f32[n]), constants u32 n:
//                  out = a + b (the device conformance suite's add_f32)
//   fake.sleep_ms  no bindings; constants: one u32, the milliseconds to sleep
//   fake.sleep_us  binding (readwrite 4 bytes), constants u32 microseconds: sleeps, then
//                  writes 0x5EE9D0E5 (the conformance suite's sleep_us)
//   fake.fail      no bindings or one: the region fails with Execution; the device stays fine
//   fake.fault     no bindings or one: Execution for this region, DeviceLost for everything
//                  else in flight, then report_lost (a sticky error)
//   fake.die       no bindings: _exit(57), mid-flight, as a crashing executor would
//   fake.hang_load loading it never returns (a hung driver call)
// `run_inline`: no worker threads; launch() runs the region and reports before it
// returns (a synchronous device, which isolates the executor hop in the benchmark).
// `polling`: ended launches are reported only by poll_completions() (completes_by_polling()
// is true, as for CUDA's flags), which the executor's consumer thread must call.
// `words`: every region slot has a completion word in a memfd (as CUDA's flags), set to 1
// when a launch succeeds, before it is reported; `report_delay` later (worker threads
// only), the sink is told.
std::unique_ptr<devices::Device> make_fake_gpu(int ordinal, bool run_inline = false, bool polling = false,
                                               bool words = false,
                                               std::chrono::microseconds report_delay = std::chrono::microseconds(0));

// Registers "fake" in `catalog`. Options: fake.devices (how many GPUs, default 2),
// fake.ordinal (open only this one; past the last: none), fake.inline (1: synchronous
// launches), fake.polling (1: reports only when polled), fake.words (1: completion
// words), fake.report_delay_us (between a word and its report), fake.fail (the factory fails with this text, as "cuda: no driver" does).
void register_fake(devices::BackendCatalog& catalog);

}  // namespace accord::testing
