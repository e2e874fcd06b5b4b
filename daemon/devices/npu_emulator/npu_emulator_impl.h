// Folder-private internals of the NPU emulator driver: the objects behind every handle
// it hands out, and the entry points the DDI tables (npu_emulator_tables.cpp) point at.
// Never included from outside daemon/devices/npu_emulator/.
//
// Handles are pointers to objects that start with a tag made of a per-library secret and
// the object's kind. Every entry point checks the tag before it touches the object, so a
// handle this copy of the library did not make (another driver's, or one the loader
// wrapped and nobody translated) is refused with ZE_RESULT_ERROR_INVALID_NULL_HANDLE
// instead of being dereferenced as ours. That is what makes a missing
// zelLoaderTranslateHandle visible in tests.
//
// Thread-safety: every entry point may be called from any thread. Events and fences
// share one mutex and condition variable (sync()); queues own a thread each.
#pragma once

#include <level_zero/ze_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accord_ze/ze_graph_ext.h"
#include "daemon/devices/npu_emulator/npu_program.h"

namespace accord::npu_emulator {

enum class Kind : std::uint64_t { Driver = 1, Device, Context, Queue, List, EventPool, Event, Fence, Graph };

// The per-library secret: the address of a static of this copy of the library.
std::uint64_t library_secret() noexcept;

struct Object {
  explicit Object(Kind kind) noexcept : tag(library_secret() ^ static_cast<std::uint64_t>(kind)) {}
  ~Object() { tag = 0; }
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  std::uint64_t tag;
};

// The object behind `handle`, or nullptr when it is null or not ours of kind T::kKind.
template <class T, class Handle>
T* object_of(Handle handle) noexcept {
  if (handle == nullptr) return nullptr;
  auto* object = reinterpret_cast<Object*>(handle);
  if (object->tag != (library_secret() ^ static_cast<std::uint64_t>(T::kKind))) return nullptr;
  return static_cast<T*>(object);
}

struct Driver : Object {
  static constexpr Kind kKind = Kind::Driver;
  Driver() : Object(kKind) {}
};

struct Device : Object {
  static constexpr Kind kKind = Kind::Device;
  Device() : Object(kKind) {}
};

// The one driver and its one device; they live as long as the library.
Driver& the_driver() noexcept;
Device& the_device() noexcept;

struct Context : Object {
  static constexpr Kind kKind = Kind::Context;
  Context() : Object(kKind) {}
};

struct EventPool : Object {
  static constexpr Kind kKind = Kind::EventPool;
  explicit EventPool(std::uint32_t size) : Object(kKind), count(size) {}
  std::uint32_t count;
};

struct Event : Object {
  static constexpr Kind kKind = Kind::Event;
  Event() : Object(kKind) {}
  bool signaled = false;  // guarded by sync().mutex
};

struct Fence : Object {
  static constexpr Kind kKind = Kind::Fence;
  Fence() : Object(kKind) {}
  bool signaled = false;  // guarded by sync().mutex
};

// The state of every event and fence of the library changes under one mutex and is
// announced on one condition variable: simple, and plenty for an emulator.
struct Sync {
  std::mutex mutex;
  std::condition_variable changed;
};
Sync& sync() noexcept;

struct Graph : Object {
  static constexpr Kind kKind = Kind::Graph;
  explicit Graph(Program p)
      : Object(kKind), program(std::make_shared<const Program>(std::move(p))), bound(program->arguments.size()) {}
  std::shared_ptr<const Program> program;
  std::mutex mutex;          // guards `bound`
  std::vector<void*> bound;  // argument i's buffer, as set by pfnSetArgumentValue
};

struct Command {
  enum class Op : std::uint8_t { Copy, Fill, Barrier, Signal, Wait, ResetEvent, GraphInitialize, GraphExecute };
  Op op = Op::Barrier;
  void* destination = nullptr;
  const void* source = nullptr;
  std::size_t bytes = 0;
  std::vector<std::uint8_t> pattern;  // Fill
  Event* signal = nullptr;            // signalled after the command ran
  std::vector<Event*> waits;          // waited for before it runs
  std::shared_ptr<const Program> program;  // GraphExecute
  std::vector<void*> arguments;            // GraphExecute: the bindings when it was appended
};

using CommandVector = std::vector<Command>;

struct CommandList : Object {
  static constexpr Kind kKind = Kind::List;
  CommandList() : Object(kKind) {}
  std::mutex mutex;
  CommandVector commands;
  // Set by close: the commands, immutable, shared with every batch that executes them,
  // so executing a closed list copies a pointer and allocates nothing.
  std::shared_ptr<const CommandVector> closed;
};

// A command queue: one thread that runs submitted batches in order.
struct CommandQueue : Object {
  static constexpr Kind kKind = Kind::Queue;
  explicit CommandQueue(bool synchronous);
  ~CommandQueue();

  struct Batch {
    std::shared_ptr<const CommandVector> first;        // the first (usually only) list
    std::vector<std::shared_ptr<const CommandVector>> rest;  // any further lists
    Fence* fence = nullptr;
  };
  // Queues `batch`; waits while kCapacity batches are already queued. Allocation-free
  // for a batch of one list (the ring is allocated when the queue is created).
  void submit(Batch batch);
  // Waits until every submitted batch ran; false on timeout (ns; UINT64_MAX: forever).
  bool wait_idle(std::uint64_t timeout_ns);

  const bool synchronous;

 private:
  static constexpr std::size_t kCapacity = 1024;

  void run();
  void execute(const Command& command);
  // Blocks the queue thread until `event` is signalled; false when the queue stops.
  bool wait_event(Event* event);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Batch> ring_ = std::vector<Batch>(kCapacity);  // batches_ of them from head_
  std::size_t head_ = 0;
  std::size_t batches_ = 0;
  bool busy_ = false;
  // Read under sync().mutex by waits on events and by the stall hook, so it is atomic;
  // set under both mutexes.
  std::atomic<bool> stopping_ = false;
  std::thread thread_;
};

// Waits on sync() until `ready()` holds or `timeout_ns` passed (UINT64_MAX: forever;
// 0: just look). Returns whether `ready()` held. Takes sync().mutex.
template <class Ready>
bool wait_sync(std::uint64_t timeout_ns, Ready ready);

// The log of the last refused graph create in this driver (the build log of a null
// graph). A driver-wide string under a mutex, not thread_local: a thread_local with a
// destructor in a library the loader dlcloses at exit trips LeakSanitizer's exit scan.
void set_build_log(std::string log);
std::string build_log();

// --- entry points, by group (DDI tables in npu_emulator_tables.cpp) ---
ze_result_t ZE_APICALL init(ze_init_flags_t flags);
ze_result_t ZE_APICALL driver_get(uint32_t* count, ze_driver_handle_t* drivers);
ze_result_t ZE_APICALL driver_get_api_version(ze_driver_handle_t driver, ze_api_version_t* version);
ze_result_t ZE_APICALL driver_get_properties(ze_driver_handle_t driver, ze_driver_properties_t* properties);
ze_result_t ZE_APICALL driver_get_ipc_properties(ze_driver_handle_t driver, ze_driver_ipc_properties_t* properties);
ze_result_t ZE_APICALL driver_get_extension_properties(ze_driver_handle_t driver, uint32_t* count,
                                                       ze_driver_extension_properties_t* properties);
ze_result_t ZE_APICALL driver_get_extension_function_address(ze_driver_handle_t driver, const char* name,
                                                             void** address);

ze_result_t ZE_APICALL device_get(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices);
ze_result_t ZE_APICALL device_get_sub_devices(ze_device_handle_t device, uint32_t* count, ze_device_handle_t* subs);
ze_result_t ZE_APICALL device_get_properties(ze_device_handle_t device, ze_device_properties_t* properties);
ze_result_t ZE_APICALL device_get_compute_properties(ze_device_handle_t device,
                                                     ze_device_compute_properties_t* properties);
ze_result_t ZE_APICALL device_get_queue_group_properties(ze_device_handle_t device, uint32_t* count,
                                                         ze_command_queue_group_properties_t* properties);
ze_result_t ZE_APICALL device_get_memory_properties(ze_device_handle_t device, uint32_t* count,
                                                    ze_device_memory_properties_t* properties);
ze_result_t ZE_APICALL device_get_status(ze_device_handle_t device);

ze_result_t ZE_APICALL context_create(ze_driver_handle_t driver, const ze_context_desc_t* desc,
                                      ze_context_handle_t* context);
ze_result_t ZE_APICALL context_destroy(ze_context_handle_t context);
ze_result_t ZE_APICALL context_get_status(ze_context_handle_t context);

ze_result_t ZE_APICALL mem_alloc_shared(ze_context_handle_t context, const ze_device_mem_alloc_desc_t* device_desc,
                                        const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                                        ze_device_handle_t device, void** pointer);
ze_result_t ZE_APICALL mem_alloc_device(ze_context_handle_t context, const ze_device_mem_alloc_desc_t* desc,
                                        size_t size, size_t alignment, ze_device_handle_t device, void** pointer);
ze_result_t ZE_APICALL mem_alloc_host(ze_context_handle_t context, const ze_host_mem_alloc_desc_t* desc, size_t size,
                                      size_t alignment, void** pointer);
ze_result_t ZE_APICALL mem_free(ze_context_handle_t context, void* pointer);
ze_result_t ZE_APICALL mem_get_alloc_properties(ze_context_handle_t context, const void* pointer,
                                                ze_memory_allocation_properties_t* properties,
                                                ze_device_handle_t* device);
ze_result_t ZE_APICALL mem_get_address_range(ze_context_handle_t context, const void* pointer, void** base,
                                             size_t* size);

ze_result_t ZE_APICALL queue_create(ze_context_handle_t context, ze_device_handle_t device,
                                    const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* queue);
ze_result_t ZE_APICALL queue_destroy(ze_command_queue_handle_t queue);
ze_result_t ZE_APICALL queue_execute(ze_command_queue_handle_t queue, uint32_t count,
                                     ze_command_list_handle_t* lists, ze_fence_handle_t fence);
ze_result_t ZE_APICALL queue_synchronize(ze_command_queue_handle_t queue, uint64_t timeout);

ze_result_t ZE_APICALL list_create(ze_context_handle_t context, ze_device_handle_t device,
                                   const ze_command_list_desc_t* desc, ze_command_list_handle_t* list);
ze_result_t ZE_APICALL list_destroy(ze_command_list_handle_t list);
ze_result_t ZE_APICALL list_close(ze_command_list_handle_t list);
ze_result_t ZE_APICALL list_reset(ze_command_list_handle_t list);
ze_result_t ZE_APICALL list_append_barrier(ze_command_list_handle_t list, ze_event_handle_t signal,
                                           uint32_t wait_count, ze_event_handle_t* waits);
ze_result_t ZE_APICALL list_append_copy(ze_command_list_handle_t list, void* destination, const void* source,
                                        size_t size, ze_event_handle_t signal, uint32_t wait_count,
                                        ze_event_handle_t* waits);
ze_result_t ZE_APICALL list_append_fill(ze_command_list_handle_t list, void* destination, const void* pattern,
                                        size_t pattern_size, size_t size, ze_event_handle_t signal,
                                        uint32_t wait_count, ze_event_handle_t* waits);
ze_result_t ZE_APICALL list_append_signal_event(ze_command_list_handle_t list, ze_event_handle_t event);
ze_result_t ZE_APICALL list_append_wait_on_events(ze_command_list_handle_t list, uint32_t count,
                                                  ze_event_handle_t* events);
ze_result_t ZE_APICALL list_append_event_reset(ze_command_list_handle_t list, ze_event_handle_t event);
// Appends `command` with its event arguments checked (shared by the graph extension).
ze_result_t append_command(ze_command_list_handle_t list, Command command, ze_event_handle_t signal,
                           uint32_t wait_count, ze_event_handle_t* waits);

ze_result_t ZE_APICALL event_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t* desc,
                                         uint32_t device_count, ze_device_handle_t* devices,
                                         ze_event_pool_handle_t* pool);
ze_result_t ZE_APICALL event_pool_destroy(ze_event_pool_handle_t pool);
ze_result_t ZE_APICALL event_create(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                                    ze_event_handle_t* event);
ze_result_t ZE_APICALL event_destroy(ze_event_handle_t event);
ze_result_t ZE_APICALL event_host_signal(ze_event_handle_t event);
ze_result_t ZE_APICALL event_host_synchronize(ze_event_handle_t event, uint64_t timeout);
ze_result_t ZE_APICALL event_query_status(ze_event_handle_t event);
ze_result_t ZE_APICALL event_host_reset(ze_event_handle_t event);

ze_result_t ZE_APICALL fence_create(ze_command_queue_handle_t queue, const ze_fence_desc_t* desc,
                                    ze_fence_handle_t* fence);
ze_result_t ZE_APICALL fence_destroy(ze_fence_handle_t fence);
ze_result_t ZE_APICALL fence_host_synchronize(ze_fence_handle_t fence, uint64_t timeout);
ze_result_t ZE_APICALL fence_query_status(ze_fence_handle_t fence);
ze_result_t ZE_APICALL fence_reset(ze_fence_handle_t fence);

// The graph extension table, filled in npu_emulator_graph.cpp.
const ze_graph_dditable_ext_t& graph_table() noexcept;

// --- template definitions ---
template <class Ready>
bool wait_sync(std::uint64_t timeout_ns, Ready ready) {
  std::unique_lock lock(sync().mutex);
  // Anything above ~30 years is "forever"; it also keeps the clock arithmetic in range.
  constexpr std::uint64_t kForever = std::uint64_t{1} << 60;
  if (timeout_ns >= kForever) {
    sync().changed.wait(lock, ready);
    return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  return sync().changed.wait_until(lock, deadline, ready);
}

}  // namespace accord::npu_emulator
