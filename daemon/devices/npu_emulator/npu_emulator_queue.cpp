// Command queues, command lists, events and fences of the emulator. A queue is a thread
// that runs submitted batches in submission order, from a ring allocated when the queue
// is created. Closing a command list freezes its commands into an immutable vector that
// every execution shares, so a closed list can be executed again while an earlier
// execution still runs (as Level Zero allows), and executing it allocates nothing.
#include <cstring>
#include <new>

#include "daemon/devices/npu_emulator/npu_emulator_impl.h"

namespace accord::npu_emulator {

Sync& sync() noexcept {
  // Never destroyed: a backend's completion thread may still wait on it while the
  // process exits, and destroying a condition variable with a waiter blocks forever.
  // Built in static storage, so the first call (maybe inside a launch) allocates nothing.
  alignas(Sync) static unsigned char storage[sizeof(Sync)];
  static Sync& s = *::new (static_cast<void*>(storage)) Sync;
  return s;
}

CommandQueue::CommandQueue(bool is_synchronous)
    : Object(kKind), synchronous(is_synchronous), thread_([this] { run(); }) {}

CommandQueue::~CommandQueue() {
  {
    std::lock_guard lock(mutex_);
    std::lock_guard sync_lock(sync().mutex);
    stopping_ = true;
  }
  changed_.notify_all();
  sync().changed.notify_all();  // wakes a wait on an event and the stall hook
  thread_.join();
  // Batches never run are dropped: their fences stay unsignalled, as on a lost device.
}

void CommandQueue::submit(Batch batch) {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return batches_ < kCapacity || stopping_; });
    if (stopping_) return;
    ring_[(head_ + batches_) % kCapacity] = std::move(batch);
    ++batches_;
  }
  changed_.notify_all();
}

bool CommandQueue::wait_idle(std::uint64_t timeout_ns) {
  std::unique_lock lock(mutex_);
  auto idle = [&] { return (batches_ == 0 && !busy_) || stopping_; };
  constexpr std::uint64_t kForever = std::uint64_t{1} << 60;
  if (timeout_ns >= kForever) {
    changed_.wait(lock, idle);
    return batches_ == 0 && !busy_;
  }
  return changed_.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns), idle) &&
         batches_ == 0 && !busy_;
}

void CommandQueue::run() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || batches_ > 0; });
      if (stopping_) return;
      batch = std::move(ring_[head_]);
      head_ = (head_ + 1) % kCapacity;
      --batches_;
      busy_ = true;
    }
    changed_.notify_all();  // a submit waiting for room
    auto run_list = [&](const CommandVector& commands) {
      for (const Command& command : commands) {
        if (stopping_) return;
        execute(command);
      }
    };
    run_list(*batch.first);
    for (const auto& list : batch.rest) run_list(*list);
    if (stopping_) return;  // a stalled program was abandoned: its fence never signals
    {
      std::lock_guard lock(sync().mutex);
      if (batch.fence != nullptr) batch.fence->signaled = true;
    }
    sync().changed.notify_all();
    {
      std::lock_guard lock(mutex_);
      busy_ = false;
    }
    changed_.notify_all();
  }
}

bool CommandQueue::wait_event(Event* event) {
  std::unique_lock lock(sync().mutex);
  sync().changed.wait(lock, [&] { return event->signaled || stopping_; });
  return !stopping_;
}

void CommandQueue::execute(const Command& command) {
  for (Event* event : command.waits)
    if (!wait_event(event)) return;
  switch (command.op) {
    case Command::Op::Copy:
      std::memmove(command.destination, command.source, command.bytes);
      break;
    case Command::Op::Fill: {
      auto* out = static_cast<std::uint8_t*>(command.destination);
      const std::size_t n = command.pattern.size();
      for (std::size_t i = 0; i < command.bytes; ++i) out[i] = command.pattern[i % n];
      break;
    }
    case Command::Op::ResetEvent: {
      std::lock_guard lock(sync().mutex);
      command.signal->signaled = false;
      return;  // `signal` is the event to reset here, not one to signal
    }
    case Command::Op::GraphExecute: {
      const bool finished = run_program(*command.program, command.arguments, [this] {
        // The test hook `stall`: never finishes; gives up only when the queue stops.
        std::unique_lock lock(sync().mutex);
        sync().changed.wait(lock, [&] { return stopping_.load(); });
        return false;
      });
      if (!finished) return;
      break;
    }
    case Command::Op::Barrier:
    case Command::Op::Signal:
    case Command::Op::Wait:
    case Command::Op::GraphInitialize: break;
  }
  if (command.signal != nullptr) {
    {
      std::lock_guard lock(sync().mutex);
      command.signal->signaled = true;
    }
    sync().changed.notify_all();
  }
}

ze_result_t ZE_APICALL queue_create(ze_context_handle_t context, ze_device_handle_t device,
                                    const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* queue) {
  if (object_of<Context>(context) == nullptr || object_of<Device>(device) == nullptr)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || queue == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->ordinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *queue = reinterpret_cast<ze_command_queue_handle_t>(
      new CommandQueue(desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL queue_destroy(ze_command_queue_handle_t queue) {
  CommandQueue* q = object_of<CommandQueue>(queue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete q;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL queue_execute(ze_command_queue_handle_t queue, uint32_t count,
                                     ze_command_list_handle_t* lists, ze_fence_handle_t fence) {
  CommandQueue* q = object_of<CommandQueue>(queue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (count == 0 || lists == nullptr) return ZE_RESULT_ERROR_INVALID_SIZE;
  CommandQueue::Batch batch;
  if (fence != nullptr) {
    batch.fence = object_of<Fence>(fence);
    if (batch.fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  for (uint32_t i = 0; i < count; ++i) {
    CommandList* list = object_of<CommandList>(lists[i]);
    if (list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    std::lock_guard lock(list->mutex);
    if (!list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (i == 0) batch.first = list->closed;
    else batch.rest.push_back(list->closed);
  }
  q->submit(std::move(batch));
  if (q->synchronous) q->wait_idle(UINT64_MAX);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL queue_synchronize(ze_command_queue_handle_t queue, uint64_t timeout) {
  CommandQueue* q = object_of<CommandQueue>(queue);
  if (q == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return q->wait_idle(timeout) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL list_create(ze_context_handle_t context, ze_device_handle_t device,
                                   const ze_command_list_desc_t* desc, ze_command_list_handle_t* list) {
  if (object_of<Context>(context) == nullptr || object_of<Device>(device) == nullptr)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || list == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *list = reinterpret_cast<ze_command_list_handle_t>(new CommandList());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL list_destroy(ze_command_list_handle_t list) {
  CommandList* l = object_of<CommandList>(list);
  if (l == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete l;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL list_close(ze_command_list_handle_t list) {
  CommandList* l = object_of<CommandList>(list);
  if (l == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(l->mutex);
  if (!l->closed) l->closed = std::make_shared<const CommandVector>(l->commands);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL list_reset(ze_command_list_handle_t list) {
  CommandList* l = object_of<CommandList>(list);
  if (l == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(l->mutex);
  l->commands.clear();
  l->closed.reset();
  return ZE_RESULT_SUCCESS;
}

ze_result_t append_command(ze_command_list_handle_t list, Command command, ze_event_handle_t signal,
                           uint32_t wait_count, ze_event_handle_t* waits) {
  CommandList* l = object_of<CommandList>(list);
  if (l == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (signal != nullptr) {
    command.signal = object_of<Event>(signal);
    if (command.signal == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (wait_count > 0 && waits == nullptr) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < wait_count; ++i) {
    Event* event = object_of<Event>(waits[i]);
    if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    command.waits.push_back(event);
  }
  std::lock_guard lock(l->mutex);
  if (l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  l->commands.push_back(std::move(command));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL list_append_barrier(ze_command_list_handle_t list, ze_event_handle_t signal,
                                           uint32_t wait_count, ze_event_handle_t* waits) {
  Command command;
  command.op = Command::Op::Barrier;  // commands of a queue run in order: nothing else to do
  return append_command(list, std::move(command), signal, wait_count, waits);
}

ze_result_t ZE_APICALL list_append_copy(ze_command_list_handle_t list, void* destination, const void* source,
                                        size_t size, ze_event_handle_t signal, uint32_t wait_count,
                                        ze_event_handle_t* waits) {
  if (destination == nullptr || source == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Command command;
  command.op = Command::Op::Copy;
  command.destination = destination;
  command.source = source;
  command.bytes = size;
  return append_command(list, std::move(command), signal, wait_count, waits);
}

ze_result_t ZE_APICALL list_append_fill(ze_command_list_handle_t list, void* destination, const void* pattern,
                                        size_t pattern_size, size_t size, ze_event_handle_t signal,
                                        uint32_t wait_count, ze_event_handle_t* waits) {
  if (destination == nullptr || pattern == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Level Zero: the pattern size is a power of two no larger than the group's maximum.
  if (pattern_size == 0 || pattern_size > 16 || (pattern_size & (pattern_size - 1)) != 0)
    return ZE_RESULT_ERROR_INVALID_SIZE;
  Command command;
  command.op = Command::Op::Fill;
  command.destination = destination;
  command.bytes = size;
  const auto* p = static_cast<const std::uint8_t*>(pattern);
  command.pattern.assign(p, p + pattern_size);
  return append_command(list, std::move(command), signal, wait_count, waits);
}

ze_result_t ZE_APICALL list_append_signal_event(ze_command_list_handle_t list, ze_event_handle_t event) {
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command command;
  command.op = Command::Op::Signal;
  return append_command(list, std::move(command), event, 0, nullptr);
}

ze_result_t ZE_APICALL list_append_wait_on_events(ze_command_list_handle_t list, uint32_t count,
                                                  ze_event_handle_t* events) {
  Command command;
  command.op = Command::Op::Wait;
  return append_command(list, std::move(command), nullptr, count, events);
}

ze_result_t ZE_APICALL list_append_event_reset(ze_command_list_handle_t list, ze_event_handle_t event) {
  if (event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Command command;
  command.op = Command::Op::ResetEvent;
  return append_command(list, std::move(command), event, 0, nullptr);
}

ze_result_t ZE_APICALL event_pool_create(ze_context_handle_t context, const ze_event_pool_desc_t* desc, uint32_t,
                                         ze_device_handle_t*, ze_event_pool_handle_t* pool) {
  if (object_of<Context>(context) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || pool == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  *pool = reinterpret_cast<ze_event_pool_handle_t>(new EventPool(desc->count));
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL event_pool_destroy(ze_event_pool_handle_t pool) {
  EventPool* p = object_of<EventPool>(pool);
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete p;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL event_create(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                                    ze_event_handle_t* event) {
  EventPool* p = object_of<EventPool>(pool);
  if (p == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || event == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->index >= p->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *event = reinterpret_cast<ze_event_handle_t>(new Event());
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL event_destroy(ze_event_handle_t event) {
  Event* e = object_of<Event>(event);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete e;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL event_host_signal(ze_event_handle_t event) {
  Event* e = object_of<Event>(event);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  {
    std::lock_guard lock(sync().mutex);
    e->signaled = true;
  }
  sync().changed.notify_all();
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL event_host_synchronize(ze_event_handle_t event, uint64_t timeout) {
  Event* e = object_of<Event>(event);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return wait_sync(timeout, [&] { return e->signaled; }) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL event_query_status(ze_event_handle_t event) { return event_host_synchronize(event, 0); }

ze_result_t ZE_APICALL event_host_reset(ze_event_handle_t event) {
  Event* e = object_of<Event>(event);
  if (e == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(sync().mutex);
  e->signaled = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL fence_create(ze_command_queue_handle_t queue, const ze_fence_desc_t* desc,
                                    ze_fence_handle_t* fence) {
  if (object_of<CommandQueue>(queue) == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (desc == nullptr || fence == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  auto* f = new Fence();
  f->signaled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
  *fence = reinterpret_cast<ze_fence_handle_t>(f);
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL fence_destroy(ze_fence_handle_t fence) {
  Fence* f = object_of<Fence>(fence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  delete f;
  return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL fence_host_synchronize(ze_fence_handle_t fence, uint64_t timeout) {
  Fence* f = object_of<Fence>(fence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return wait_sync(timeout, [&] { return f->signaled; }) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL fence_query_status(ze_fence_handle_t fence) { return fence_host_synchronize(fence, 0); }

ze_result_t ZE_APICALL fence_reset(ze_fence_handle_t fence) {
  Fence* f = object_of<Fence>(fence);
  if (f == nullptr) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::lock_guard lock(sync().mutex);
  f->signaled = false;
  return ZE_RESULT_SUCCESS;
}

}  // namespace accord::npu_emulator
