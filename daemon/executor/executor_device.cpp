// ExecutorDevice: starting an executor, the control requests, and the hot path (launch
// and completions). Supervision (loss, restart, shut-down) is executor_supervisor.cpp.
#include "daemon/executor/executor_device.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "daemon/executor/executor_device_impl.h"
#include "client/api/thread_name.h"

namespace accord::executor {

using detail::ExecutorAdmission;
using detail::ExecutorCode;
using detail::ExecutorMemory;
using detail::ExecutorRegion;
using detail::SpinGuard;

namespace {

std::vector<std::string> executor_argv(const ExecutorOptions& options, int fd) {
  std::vector<std::string> argv{options.binary};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  argv.insert(argv.end(), {"--gpu-executor", std::to_string(options.ordinal), "--executor-fd", std::to_string(fd),
                           "--executor-backend", options.backend});
  const std::string prefix = options.backend + ".";
  for (const auto& [key, value] : options.device_options) {
    if (!key.starts_with(prefix)) continue;
    argv.push_back("--device-option");
    argv.push_back(key + "=" + value);
  }
  return argv;
}

}  // namespace

ExecutorDevice::ExecutorDevice(ExecutorOptions options)
    : options_(std::move(options)), label_("gpu:" + std::to_string(options_.ordinal) + " executor") {}

Result<std::unique_ptr<ExecutorDevice>> ExecutorDevice::open(ExecutorOptions options) {
  ACCORD_RETURN_IF_ERROR(options.validate());
  std::unique_ptr<ExecutorDevice> device(new ExecutorDevice(std::move(options)));
  device->wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!device->wake_fd_) return busy_error(device->label_ + ": eventfd: " + std::strerror(errno));
  HelloInfo hello;
  ACCORD_ASSIGN_OR_RETURN(std::shared_ptr<Connection> connection, device->start(1, hello));
  if (!hello.error.empty()) {
    static_cast<void>(connection->child.stop(device->options_.exit_grace));
    return unsupported_error(hello.error);
  }
  if (!hello.has_device) {
    static_cast<void>(connection->child.stop(device->options_.exit_grace));
    return std::unique_ptr<ExecutorDevice>();
  }
  device->hello_ = std::move(hello);
  spdlog::info("{}: {} ({}) served by pid {}", device->label_, device->hello_.info.name, device->hello_.info.target,
               connection->child.pid());
  device->install(std::move(connection));
  device->supervisor_ = std::thread([d = device.get()] { d->supervise(); });
  device->completer_ = std::thread([d = device.get()] { d->complete_loop(); });
  if (device->options_.standby) device->spawner_ = std::thread([d = device.get()] { d->spawn_standbys(); });
  return device;
}

ExecutorDevice::~ExecutorDevice() { shut_down(); }

Result<std::shared_ptr<ExecutorDevice::Connection>> ExecutorDevice::start(std::uint64_t generation, HelloInfo& hello) {
  auto connection = std::make_shared<Connection>();
  connection->generation = generation;
  ACCORD_ASSIGN_OR_RETURN(connection->channel, ExecutorChannel::create());
  {
    // The launch echoes get a mapping of their own, which regions share: they outlive
    // this connection's channel when a stale region is dropped after a restart.
    UniqueFd again(::fcntl(connection->channel.fd(), F_DUPFD_CLOEXEC, 0));
    auto echoes = again ? detail::CompletionWordMapping::map(std::move(again), ExecutorChannel::echo_bytes(), label_,
                                                             connection->channel.echo_offset())
                        : Result<std::shared_ptr<detail::CompletionWordMapping>>(
                              busy_error(label_ + ": dup of the channel: " + std::strerror(errno)));
    if (echoes.ok()) connection->echoes = std::move(echoes).value();
    else spdlog::warn("{}: {}; completions come through the queue only", label_, echoes.status().message());
  }
  int pair[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return busy_error(label_ + ": socketpair: " + std::strerror(errno));
  connection->socket = UniqueFd(pair[0]);
  UniqueFd theirs(pair[1]);
  auto child = ChildProcess::spawn(executor_argv(options_, theirs.get()), theirs.get());
  if (!child.ok()) return unsupported_error(label_ + ": " + std::string(child.status().message()));
  connection->child = std::move(child).value();
  theirs.reset();  // the child has its copy; our hang-up detection needs ours closed
  const std::string who = label_ + " (pid " + std::to_string(connection->child.pid()) + ")";
  const auto fail = [&](const std::string& why) -> Status {
    const std::string ended = connection->child.kill_and_reap();
    return unsupported_error(who + " " + why + " (it " + ended + ")");
  };
  if (Status sent = send_control(connection->socket.get(), ControlOp::Init, 0, 0, {}, connection->channel.fd());
      !sent.ok())
    // Most often the executor ended already (a bad binary, a failed start): it hung up
    // before its hello, which is what an exit after this send is told as too.
    return fail("hung up before its hello: it did not take its channel: " + std::string(sent.message()));

  const auto deadline = std::chrono::steady_clock::now() + options_.hello_timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return fail("said no hello within " + std::to_string(options_.hello_timeout.count()) + " ms");
    pollfd fds[2] = {{connection->socket.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
    if (n < 0 && errno != EINTR) return fail(std::string("poll: ") + std::strerror(errno));
    if (stopping_.load()) return fail("was still starting when the device shut down");
    if (n <= 0 || (fds[0].revents == 0)) continue;
    auto message = receive_control(connection->socket.get());
    if (!message.ok()) return fail("sent a malformed hello: " + std::string(message.status().message()));
    if (!message->has_value()) return fail("hung up before its hello");
    if ((*message)->op != ControlOp::Hello)
      return fail(std::string("sent '") + to_string((*message)->op) + "' instead of its hello");
    auto decoded = decode_hello((*message)->payload, who);
    if (!decoded.ok()) return fail("sent a malformed hello: " + std::string(decoded.status().message()));
    hello = std::move(decoded).value();
    if (hello.completion_word_bytes != 0) {
      // Without them launches still end through completion records, only later.
      auto words = detail::CompletionWordMapping::map(std::move((*message)->fd), hello.completion_word_bytes, who);
      if (words.ok()) connection->words = std::move(words).value();
      else spdlog::warn("{}: {}; completions come through the queue only", label_, words.status().message());
    }
    break;
  }
  if (hello.error.empty() && hello.has_device &&
      (hello.info.kind != DeviceKind::Gpu || hello.info.ordinal != options_.ordinal))
    return fail("serves " + hello.info.id().to_string() + ", not gpu:" + std::to_string(options_.ordinal));
  connection->commands = wire::RingProducer<CommandEntry>(connection->channel.commands());
  connection->completions = wire::RingConsumer<CompletionRecord>(connection->channel.completions());
  return connection;
}

void ExecutorDevice::install(std::shared_ptr<Connection> connection) {
  Connection* raw = connection.get();
  {
    SpinGuard launch(launch_lock_);
    launch_connection_ = raw;
  }
  {
    SpinGuard consume(consume_lock_);
    consume_connection_ = raw;
  }
  words_in_use_.store(raw->words != nullptr, std::memory_order_release);
  {
    std::lock_guard lock(connection_mu_);
    connection_ = std::move(connection);
  }
  generation_.store(raw->generation, std::memory_order_release);
  live_generation_.store(raw->generation, std::memory_order_seq_cst);
}

pid_t ExecutorDevice::executor_pid() const {
  std::lock_guard lock(connection_mu_);
  return connection_ ? connection_->child.pid() : -1;
}

bool ExecutorDevice::supports(MemoryPlacement placement) const noexcept {
  return std::find(hello_.placements.begin(), hello_.placements.end(), placement) != hello_.placements.end();
}

Status ExecutorDevice::stale(std::uint64_t generation, const char* what) const {
  const std::uint64_t live = live_generation_.load(std::memory_order_acquire);
  if (live == 0) {
    std::lock_guard lock(connection_mu_);
    return device_lost_error(hello_.info.name + ": " + label_ + " is down (restarting after: " + last_cause_ + ")");
  }
  return device_lost_error(hello_.info.name + ": " + what + " was made before executor restart (generation " +
                           std::to_string(generation) + ", now " + std::to_string(live) + ")");
}

// --- control requests ---

Result<ControlMessage> ExecutorDevice::request(ControlOp op, std::span<const std::byte> payload, int fd,
                                               std::uint64_t expected) {
  std::lock_guard control(control_mu_);
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard lock(connection_mu_);
    connection = connection_;
  }
  if (!connection || connection->dead.load() || (expected != 0 && connection->generation != expected))
    return stale(expected, "an object it uses");
  const std::uint32_t id = ++next_request_id_ == 0 ? ++next_request_id_ : next_request_id_;
  {
    std::lock_guard lock(reply_mu_);
    pending_id_ = id;
    reply_.reset();
  }
  const std::string who = label_ + " (pid " + std::to_string(connection->child.pid()) + ")";
  if (Status sent = send_control(connection->socket.get(), op, id, 0, payload, fd); !sent.ok()) {
    if (sent.kind() == ErrorKind::Internal) return sent;
    // A hang-up: the supervisor sees it too and restarts the executor.
    return device_lost_error(hello_.info.name + ": " + who + " did not take '" + to_string(op) +
                             "': " + std::string(sent.message()));
  }
  std::unique_lock lock(reply_mu_);
  if (!reply_cv_.wait_for(lock, options_.request_timeout, [&] { return reply_.has_value(); })) {
    pending_id_ = 0;
    lock.unlock();
    const std::string cause = "did not answer '" + std::string(to_string(op)) + "' within " +
                              std::to_string(options_.request_timeout.count()) + " ms";
    request_loss(connection->generation, cause);
    return device_lost_error(hello_.info.name + ": " + who + " " + cause);
  }
  pending_id_ = 0;
  Result<ControlMessage> reply = std::move(*reply_);
  reply_.reset();
  lock.unlock();
  if (!reply.ok()) return reply.status();
  Status status = decode_status(reply->status, reply->payload, who);
  if (!status.ok()) return status;
  return reply;
}

void ExecutorDevice::release(ReleaseKind kind, std::uint64_t generation, std::uint32_t id) noexcept {
  if (generation != live_generation_.load(std::memory_order_acquire)) return;
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard lock(connection_mu_);
    connection = connection_;
  }
  if (!connection || connection->generation != generation || connection->dead.load()) return;
  // No answer is awaited: a region may be destroyed inside a sink, on the completion
  // thread, which must not wait for a round trip (or for a supervisor busy with a loss).
  try {
    const std::vector<std::byte> payload = encode(ReleaseRequest{kind, id});
    static_cast<void>(send_control(connection->socket.get(), ControlOp::Release, 0, 0, payload));
  } catch (...) {
    // Out of memory while releasing: the executor keeps the object until it exits.
  }
}

std::uint64_t ExecutorDevice::free_memory() const noexcept {
  try {
    auto reply = const_cast<ExecutorDevice*>(this)->request(ControlOp::FreeMemory, {});
    if (!reply.ok()) return 0;
    auto value = decode_u64(reply->payload, label_);
    return value.ok() ? *value : 0;
  } catch (...) {
    return 0;
  }
}

Result<std::unique_ptr<devices::DeviceMemory>> ExecutorDevice::allocate(const devices::AllocationRequest& request) {
  if (request.bytes == 0) return invalid_error(hello_.info.name + ": cannot allocate 0 bytes");
  if (!supports(request.placement))
    return unsupported_error(hello_.info.name + " is not the home of " + request.placement.to_string());
  // Host-mapped placements would need the executor's pages mapped here too; a GPU is
  // the home of GpuLocal only (README.md, "Memory").
  if (request.placement.host_mapped())
    return unsupported_error(hello_.info.name + ": " + request.placement.to_string() +
                             " memory is not served through an executor");
  const std::uint64_t generation = live_generation_.load();
  ACCORD_ASSIGN_OR_RETURN(ControlMessage reply,
                          this->request(ControlOp::Allocate, encode(AllocateRequest{request.bytes, request.placement}), -1,
                                  generation));
  ACCORD_ASSIGN_OR_RETURN(const ObjectReply object, decode_object(reply.payload, label_));
  if (object.bytes < request.bytes)
    return internal_error(hello_.info.name + ": " + label_ + " granted " + std::to_string(object.bytes) +
                          " bytes for a request of " + std::to_string(request.bytes));
  return std::unique_ptr<devices::DeviceMemory>(new ExecutorMemory(
      *this, generation, object.id, static_cast<std::size_t>(object.bytes), object.device_address, std::move(reply.fd)));
}

Result<std::unique_ptr<devices::AdmittedMemory>> ExecutorDevice::admit(const devices::DeviceMemory& memory,
                                                                       const devices::DeviceInfo& home) {
  // Only memory with an exportable fd can cross the process boundary: host-mapped memfd
  // pages, which the executor maps itself (MAP_SHARED), or another GPU's memory as its
  // executor exported it (a VMM handle), which the executor's device imports.
  if (memory.export_fd() < 0 || (memory.host_address() == nullptr && home.kind != DeviceKind::Gpu))
    return unsupported_error(hello_.info.name + " cannot reach memory of " + home.name + " (" +
                             home.id().to_string() +
                             "): only host-mapped memfd memory and exported GPU memory are admitted to a GPU executor");
  const AdmitKind kind = memory.host_address() != nullptr ? AdmitKind::HostPages : AdmitKind::GpuMemory;
  const std::uint64_t generation = live_generation_.load();
  ACCORD_ASSIGN_OR_RETURN(ControlMessage reply,
                          request(ControlOp::Admit, encode(AdmitRequest{memory.bytes(), home, kind}), memory.export_fd(),
                                  generation));
  ACCORD_ASSIGN_OR_RETURN(const ObjectReply object, decode_object(reply.payload, label_));
  return std::unique_ptr<devices::AdmittedMemory>(
      new ExecutorAdmission(*this, generation, object.id, object.device_address));
}

Result<std::unique_ptr<devices::LoadedCode>> ExecutorDevice::load(const devices::CodeImage& image,
                                                                  const KernelContract& contract) {
  const std::uint64_t generation = live_generation_.load();
  ACCORD_ASSIGN_OR_RETURN(ControlMessage reply, request(ControlOp::Load, encode(image, contract), -1, generation));
  ACCORD_ASSIGN_OR_RETURN(const ObjectReply object, decode_object(reply.payload, label_));
  return std::unique_ptr<devices::LoadedCode>(new ExecutorCode(*this, generation, object.id, image.name, contract));
}

Result<std::unique_ptr<devices::NativeRegion>> ExecutorDevice::lower(const devices::RegionRequest& request) {
  if (request.slots == 0) return invalid_error(hello_.info.name + ": a region needs at least one slot");
  const std::uint64_t generation = live_generation_.load();
  if (generation == 0) return stale(0, "");
  WireRegion wire;
  wire.slots = request.slots;
  wire.priority = request.priority;
  wire.tenant = request.tenant;
  wire.edges.assign(request.edges.begin(), request.edges.end());
  wire.operations.reserve(request.operations.size());
  for (const devices::Operation& op : request.operations) {
    const std::string where = hello_.info.name + ": node " + std::to_string(op.node);
    WireOperation w;
    w.kind = op.kind;
    w.lane = op.lane;
    w.fill_value = op.fill_value;
    w.node = op.node;
    if (op.code != nullptr) {
      const auto* code = dynamic_cast<const ExecutorCode*>(op.code);
      if (code == nullptr || code->owner() != this)
        return invalid_error(where + ": kernel '" + op.code->name() + "' was not loaded on this device");
      if (code->generation() != generation) return stale(code->generation(), ("kernel '" + code->name() + "'").c_str());
      w.code = code->id();
    }
    std::uint32_t index = 0;
    for (const devices::OperationBinding& b : op.bindings) {
      WireBinding wb;
      wb.address = b.address;
      wb.offset = b.offset;
      wb.length = b.length;
      wb.access = b.access;
      if (b.admission != nullptr) {
        const auto* admission = dynamic_cast<const ExecutorAdmission*>(b.admission);
        if (admission == nullptr || admission->owner() != this)
          return invalid_error(where + " binding " + std::to_string(index) + ": admitted to another device");
        if (admission->generation() != generation) return stale(admission->generation(), "an admission it binds");
        wb.ref = BindingRef::Admission;
        wb.id = admission->id();
      } else if (b.memory != nullptr) {
        const auto* memory = dynamic_cast<const ExecutorMemory*>(b.memory);
        if (memory == nullptr || memory->owner() != this)
          return invalid_error(where + " binding " + std::to_string(index) +
                               ": memory of another device that was not admitted here");
        if (memory->generation() != generation) return stale(memory->generation(), "memory it binds");
        wb.ref = BindingRef::Memory;
        wb.id = memory->id();
      }
      w.bindings.push_back(wb);
      ++index;
    }
    wire.operations.push_back(std::move(w));
  }
  ACCORD_ASSIGN_OR_RETURN(ControlMessage reply, this->request(ControlOp::Lower, encode(wire), -1, generation));
  ACCORD_ASSIGN_OR_RETURN(const RegionReply region, decode_region(reply.payload, request.slots, label_));
  std::shared_ptr<const detail::CompletionWordMapping> words, echoes;
  {
    std::lock_guard lock(connection_mu_);
    if (connection_ && connection_->generation == generation) {
      words = connection_->words;
      echoes = connection_->echoes;
    }
  }
  return std::unique_ptr<devices::NativeRegion>(new ExecutorRegion(*this, generation, region.id, request.slots,
                                                                   std::move(words), std::move(echoes), region.words));
}

void ExecutorDevice::register_region(ExecutorRegion& region) {
  std::lock_guard lock(regions_mu_);
  regions_[region.key()] = &region;
}

void ExecutorDevice::unregister_region(ExecutorRegion& region) noexcept {
  std::lock_guard lock(regions_mu_);
  regions_.erase(region.key());
}

// --- the hot path ---

void ExecutorDevice::launch(devices::NativeRegion& native, const devices::RegionWaits& waits,
                            devices::CompletionSink& sink) noexcept {
  auto& region = static_cast<ExecutorRegion&>(native);
  if (waits.slot >= region.slots()) {
    sink.on_error(internal_error(hello_.info.name + ": launch in slot " + std::to_string(waits.slot) + " of a region with " +
                                 std::to_string(region.slots()) + " slots"));
    return;  // may destroy *this: no member access below
  }
  if (region.generation() != live_generation_.load(std::memory_order_seq_cst)) {
    sink.on_error(stale(region.generation(), "the region"));
    return;
  }
  // Published before the entry, so that the loss sweep, which runs after it has taken
  // the launch lock, finds it; seq_cst pairs with the sweep's `dead` store. The word is
  // left alone: the executor may not have seen the last launch's 1 there yet, and the
  // device clears it in its launch(), which the echo then confirms.
  detail::LaunchCell& cell = region.cell(waits.slot);
  std::uint32_t number = next_launch_.fetch_add(1, std::memory_order_relaxed);
  if (number == 0) number = next_launch_.fetch_add(1, std::memory_order_relaxed);
  cell.sink = &sink;
  cell.launch.store(number, std::memory_order_seq_cst);
  if (cell.watch >= 0) watch_.arm(cell.watch);
  bool pushed = false;
  {
    SpinGuard lock(launch_lock_);
    Connection* connection = launch_connection_;
    if (connection != nullptr && connection->generation == region.generation() &&
        !connection->dead.load(std::memory_order_seq_cst))
      pushed = push_launch(*connection, region, waits, number,
                           cell.watch >= 0 ? static_cast<std::uint32_t>(cell.watch) : kNoEcho);
  }
  if (pushed) return;
  if (cell.claim(number)) sink.on_error(stale(region.generation(), "the region"));
}

bool ExecutorDevice::push_launch(Connection& connection, ExecutorRegion& region, const devices::RegionWaits& waits,
                                 std::uint32_t number, std::uint32_t echo) noexcept {
  // Predecessors of an earlier executor are gone (their launches were failed); the
  // entry names only live ones.
  std::uint32_t total = 0;
  for (const devices::RegionWait& w : waits.predecessors) {
    const auto* before = static_cast<const ExecutorRegion*>(w.region);
    if (before->generation() == region.generation()) ++total;
  }
  const std::uint32_t more = total > kWaitsPerEntry ? (total - kWaitsPerEntry + kWaitsPerEntry - 1) / kWaitsPerEntry : 0;
  // The executor frees positions as it takes entries; a full queue means it is busy,
  // and only a dead one never frees them.
  while (!connection.commands.has_room(more + 1)) {
    if (connection.dead.load(std::memory_order_acquire) || connection.commands.corrupt()) return false;
    std::this_thread::yield();
  }
  CommandEntry entry{};
  entry.opcode = static_cast<std::uint16_t>(CommandOp::Launch);
  entry.region = region.id();
  entry.slot = waits.slot;
  entry.launch = number;
  entry.echo = echo;
  entry.more = more;
  for (const devices::RegionWait& w : waits.predecessors) {
    const auto* before = static_cast<const ExecutorRegion*>(w.region);
    if (before->generation() != region.generation()) continue;
    if (entry.waits == kWaitsPerEntry) {
      static_cast<void>(connection.commands.try_push(entry));
      entry = CommandEntry{};
      entry.opcode = static_cast<std::uint16_t>(CommandOp::MoreWaits);
    }
    entry.wait[entry.waits++] = {before->id(), w.slot};
  }
  static_cast<void>(connection.commands.try_push(entry));
  return true;
}

void ExecutorDevice::poll_completions() noexcept {
  // With completion words, nothing armed means no launch in flight that a sweep could
  // report (a launch's error record comes while its slot is armed): return after one
  // load, so that idle helpers (accordd's spinning ring pollers) cost nothing here.
  if (words_in_use_.load(std::memory_order_relaxed) && !watch_.armed()) return;
  // Seen by the completion thread, which then leaves the queue to the helpers: a
  // completion is best reported on the thread waiting for it, and two threads racing
  // for the consume lock only move its cache line back and forth. Written only when the
  // completion thread has looked since, so that many helpers do not bounce its line.
  if (!helper_polled_.load(std::memory_order_relaxed)) helper_polled_.store(true, std::memory_order_relaxed);
  collect();
}

void ExecutorDevice::collect() noexcept {
  // The words first: a launch that ended shows there before the executor has seen it.
  // When they reported something, the queue waits for the next look: its records of
  // those launches are still on their way (and would be dropped), and reading its tail
  // now would pull a cache line the executor is writing, just as the thread that was
  // waiting wants to submit its next launch.
  if (const int seen = watch_.sweep(); seen > 0) {
    completions_by_word_.fetch_add(static_cast<std::uint64_t>(seen), std::memory_order_relaxed);
    return;
  }
  drain_if_free();
}

void ExecutorDevice::drain_if_free() noexcept {
  if (consume_lock_.test_and_set(std::memory_order_acquire)) return;  // someone else is at it
  if (consume_connection_ != nullptr) static_cast<void>(drain(*consume_connection_));
  consume_lock_.clear(std::memory_order_release);
}

int ExecutorDevice::drain(Connection& connection) noexcept {
  int reported = 0;
  CompletionRecord record;
  CompletionMessage message;  // an error's text, copied out before its position is freed
  for (;;) {
    const wire::PopResult popped = connection.completions.try_pop_with(record, [&](std::uint32_t position) {
      if (record.outcome == static_cast<std::uint32_t>(Outcome::Error))
        std::memcpy(message.text, connection.channel.completion_message(position).text,
                    std::min<std::size_t>(record.message_bytes, kCompletionMessageBytes));
    });
    if (popped == wire::PopResult::Empty) break;
    if (popped == wire::PopResult::Corrupt) {
      request_loss(connection.generation, "corrupted its completion queue");
      break;
    }
    dispatch(connection.generation, record, message);
    ++reported;
  }
  return reported;
}

void ExecutorDevice::dispatch(std::uint64_t generation, const CompletionRecord& record,
                              const CompletionMessage& text) noexcept {
  devices::CompletionSink* sink = nullptr;
  {
    std::lock_guard lock(regions_mu_);
    const auto found = regions_.find(generation << 32 | record.region);
    if (found == regions_.end() || record.slot >= found->second->slots()) {
      // The executor is ours, so this is a bug there, not an attack; it must not crash
      // accordd or report anything.
      spdlog::warn("{}: completion for region {} slot {} matches no region; ignored", label_, record.region,
                   record.slot);
      return;
    }
    detail::LaunchCell& cell = found->second->cell(record.slot);
    // Claimed already when a waiting thread saw the launch's completion word first.
    if (record.launch == 0 || !cell.claim(record.launch)) return;
    sink = cell.sink;
  }
  switch (static_cast<Outcome>(record.outcome)) {
    case Outcome::Done: sink->on_done(); return;
    case Outcome::Cancelled: sink->on_cancelled(); return;
    case Outcome::Error: {
      const std::size_t bytes = std::min<std::size_t>(record.message_bytes, kCompletionMessageBytes);
      std::string message(text.text, bytes);
      const ErrorKind kind = record.error_kind == static_cast<std::uint32_t>(ErrorKind::DeviceLost)
                                 ? ErrorKind::DeviceLost
                                 : ErrorKind::Execution;
      sink->on_error(Status::error(kind, std::move(message)));
      return;
    }
  }
  sink->on_error(execution_error(hello_.info.name + ": " + label_ + " reported unknown outcome " +
                                 std::to_string(record.outcome)));
}

void ExecutorDevice::complete_loop() noexcept {
  name_this_thread("exec-complete");
  std::uint32_t seen_tail = 0;
  while (!stopping_.load(std::memory_order_acquire)) {
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard lock(connection_mu_);
      connection = connection_;
    }
    if (!connection) {
      // Between executors: the supervisor installs the next one.
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    // While a helper polls, it reports; this thread sleeps a little (not counted on the
    // doorbell, so the executor's pushes wake nobody) and takes over as soon as no helper
    // polled since its last look. Sleeping, not pausing: with many tenants, a resting
    // thread per GPU executor that spins takes the cores the waiters need (16 tenants
    // on 16 cores fell to 31,000 graphs/s on the H200).
    if (helper_polled_.load(std::memory_order_relaxed) && helper_polled_.exchange(false, std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      continue;
    }
    collect();
    // `connection` keeps the mapping alive while this thread sleeps on its doorbell.
    // The spin restarts whenever the executor publishes, even when a helper drained the
    // entry first: while completions flow this thread never sleeps, so the executor's
    // push never has a sleeper to wake (no system call on either side).
    ChannelHeader& header = connection->channel.header();
    static_cast<void>(wire::wait_doorbell(header.completion_bell, options_.spin, std::chrono::milliseconds(20), [&] {
      return header.completion_tail.value.load(std::memory_order_acquire) != seen_tail || watch_.any_done() ||
             connection->dead.load(std::memory_order_relaxed) || stopping_.load(std::memory_order_relaxed);
    }));
    seen_tail = header.completion_tail.value.load(std::memory_order_acquire);
  }
}

}  // namespace accord::executor
