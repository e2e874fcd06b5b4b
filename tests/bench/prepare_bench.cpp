// prepare_bench: Session::prepare cost per declared access on random 100/1,000/10,000-node graphs
// (fills, slice copies, accord.add_f32), with the frontier, summary and host lowering timed alone.
// Run: build-bench/tests/bench/prepare_bench [--config 1000] [--iterations N] (callgrind: few iterations)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "accord/builtin_kernels.h"
#include "daemon/devices/host/host_registration.h"
#include "daemon/engine/access_summary.h"
#include "daemon/engine/engine.h"
#include "daemon/engine/interval_frontier.h"
#include "tests/bench/bench_util.h"

namespace accord::bench {
namespace {

using devices::OpKind;
using engine::AccessRange;

constexpr std::size_t kBuffers = 64;
constexpr std::size_t kBufferBytes = 64 * 1024;
constexpr std::size_t kGrain = 1024;  // slice offsets and lengths are whole KiB
constexpr std::size_t kGrains = kBufferBytes / kGrain;
constexpr std::uint32_t kKernelFloats = 1024;  // add_f32 bindings of 4 KiB
constexpr std::size_t kKernelGrains = kKernelFloats * sizeof(float) / kGrain;
constexpr std::uint64_t kSeed = 20240917;

// One binding of the recipe: buffer index and byte range.
struct Slice {
  std::size_t buffer = 0;
  std::size_t offset = 0;
  std::size_t length = 0;
  bool overlaps(const Slice& o) const {
    return buffer == o.buffer && offset < o.offset + o.length && o.offset < offset + length;
  }
};

struct RecipeOp {
  OpKind kind = OpKind::Fill;
  std::uint8_t fill_value = 0;
  std::vector<Slice> slices;  // fill {dst}; copy {dst, src}; kernel {a, b, out}
};

// A random but realistic graph: 15% fills (1 use; one in ten whole-buffer), 35% copies
// between non-overlapping slices of 1-16 KiB (2 uses), 50% add_f32 on 4 KiB slices
// (3 uses, out never overlaps an input): 2.35 uses per node on average.
std::vector<RecipeOp> make_recipe(std::size_t nodes, std::mt19937_64& rng) {
  auto uniform = [&](std::size_t lo, std::size_t hi) {  // inclusive
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  auto slice = [&](std::size_t grains) {
    return Slice{uniform(0, kBuffers - 1), uniform(0, kGrains - grains) * kGrain, grains * kGrain};
  };
  std::vector<RecipeOp> ops(nodes);
  for (RecipeOp& op : ops) {
    const std::size_t pick = uniform(0, 99);
    if (pick < 15) {
      op.kind = OpKind::Fill;
      op.fill_value = static_cast<std::uint8_t>(uniform(0, 255));
      op.slices = {uniform(0, 9) == 0 ? Slice{uniform(0, kBuffers - 1), 0, kBufferBytes}
                                      : slice(uniform(1, 16))};
    } else if (pick < 50) {
      op.kind = OpKind::Copy;
      const std::size_t grains = uniform(1, 16);
      Slice dst = slice(grains);
      Slice src = slice(grains);
      while (src.overlaps(dst)) src = slice(grains);
      op.slices = {dst, src};
    } else {
      op.kind = OpKind::Kernel;
      Slice a = slice(kKernelGrains);
      Slice b = slice(kKernelGrains);
      Slice out = slice(kKernelGrains);
      while (out.overlaps(a) || out.overlaps(b)) out = slice(kKernelGrains);
      op.slices = {a, b, out};
    }
  }
  return ops;
}

struct Fixture {
  std::unique_ptr<engine::Engine> engine;
  engine::Ref<engine::Session> session;
  std::vector<engine::Ref<engine::Allocation>> buffers;
  engine::Ref<engine::Kernel> add;
};

Fixture make_fixture() {
  Fixture f;
  devices::DeviceRegistry registry;
  registry.add(unwrap(devices::host::make_host_device({}), "make_host_device"));
  engine::EngineOptions options;
  options.worker_threads = 0;
  f.engine = unwrap(engine::Engine::create(options, std::move(registry)), "Engine::create");
  f.session = unwrap(f.engine->open_session({}, "prepare_bench"), "open_session");
  for (std::size_t i = 0; i < kBuffers; ++i)
    f.buffers.push_back(
        unwrap(f.session->allocate(kBufferBytes, MemoryPlacement::host_visible()), "allocate"));
  const builtin::KernelSpec spec = builtin::add_f32(kKernelFloats);
  f.add = unwrap(f.session->load_kernel(
                     devices::CodeImage{devices::CodeImage::Kind::Builtin, spec.name, {}}, spec.contract),
                 "load_kernel accord.add_f32");
  return f;
}

engine::GraphSpec build_spec(const Fixture& f, const std::vector<RecipeOp>& recipe) {
  engine::GraphSpec spec;
  spec.ops.reserve(recipe.size());
  for (const RecipeOp& r : recipe) {
    engine::OperationSpec op;
    op.kind = r.kind;
    op.fill_value = r.fill_value;
    if (r.kind == OpKind::Kernel) op.kernel = f.add;
    op.bindings.reserve(r.slices.size());
    for (const Slice& s : r.slices) op.bindings.push_back({f.buffers[s.buffer], s.offset, s.length});
    spec.ops.push_back(std::move(op));
  }
  return spec;
}

Access access_of(const RecipeOp& op, std::size_t binding) {
  switch (op.kind) {
    case OpKind::Fill: return Access::Write;
    case OpKind::Copy: return binding == 0 ? Access::Write : Access::Read;
    case OpKind::Kernel: return binding == 2 ? Access::Write : Access::Read;
  }
  return Access::Read;
}

// The uses prepare derives (lowering.cpp check_operation), flat, with per-op spans.
struct Uses {
  std::vector<AccessRange> flat;
  std::vector<std::span<const AccessRange>> per_op;
};

Uses make_uses(const Fixture& f, const std::vector<RecipeOp>& recipe) {
  Uses u;
  std::vector<std::size_t> first;
  for (const RecipeOp& op : recipe) {
    first.push_back(u.flat.size());
    for (std::size_t b = 0; b < op.slices.size(); ++b) {
      const Slice& s = op.slices[b];
      u.flat.push_back({f.buffers[s.buffer]->id(), s.offset, s.offset + s.length, access_of(op, b)});
    }
  }
  for (std::size_t i = 0; i < recipe.size(); ++i)
    u.per_op.emplace_back(u.flat.data() + first[i], recipe[i].slices.size());
  return u;
}

LaneKind lane_of(OpKind kind) { return kind == OpKind::Kernel ? LaneKind::Host : LaneKind::Compute; }

// The device's lower() calls prepare makes: one per maximal same-lane run.
struct LoweringInput {
  std::vector<devices::OperationBinding> bindings;
  std::vector<devices::Operation> ops;
  std::vector<std::span<const devices::Operation>> runs;
};

LoweringInput make_lowering(const Fixture& f, const std::vector<RecipeOp>& recipe) {
  LoweringInput in;
  std::size_t total = 0;
  for (const RecipeOp& op : recipe) total += op.slices.size();
  in.bindings.reserve(total);
  for (const RecipeOp& r : recipe) {
    const std::size_t first = in.bindings.size();
    for (std::size_t b = 0; b < r.slices.size(); ++b) {
      const Slice& s = r.slices[b];
      const devices::DeviceMemory& memory = f.buffers[s.buffer]->memory();
      in.bindings.push_back({&memory, nullptr, memory.device_address(), s.offset, s.length, access_of(r, b)});
    }
    devices::Operation o;
    o.kind = r.kind;
    o.lane = lane_of(r.kind);
    o.fill_value = r.fill_value;
    o.code = r.kind == OpKind::Kernel ? &f.add->code() : nullptr;
    o.bindings = std::span<const devices::OperationBinding>(in.bindings.data() + first, r.slices.size());
    in.ops.push_back(o);
  }
  for (std::size_t begin = 0; begin < in.ops.size();) {
    std::size_t end = begin + 1;
    while (end < in.ops.size() && in.ops[end].lane == in.ops[begin].lane) ++end;
    in.runs.emplace_back(in.ops.data() + begin, end - begin);
    begin = end;
  }
  return in;
}

// One timed run: CPU time of this thread and wall time, both in nanoseconds.
struct Sample {
  double cpu = 0;
  double wall = 0;
};

// Brackets the timed part of a repetition; setup and teardown stay outside.
class Stopwatch {
 public:
  void start() {
    cpu_ = thread_cpu_ns();
    wall_ = Clock::now();
  }
  Sample stop() const {
    const Clock::time_point wall = Clock::now();
    const double cpu = thread_cpu_ns();
    return {cpu - cpu_, elapsed_ns(wall_, wall)};
  }

 private:
  double cpu_ = 0;
  Clock::time_point wall_;
};

struct Medians {
  double cpu = 0;
  double wall = 0;
};

// Medians of `reps` samples of `fn`, after `warmup` untimed calls. `fn` times itself
// with a Stopwatch, so it can keep setup and teardown out, and returns the Sample.
template <class Fn>
Medians median_of(std::size_t warmup, std::size_t reps, Fn&& fn) {
  for (std::size_t i = 0; i < warmup; ++i) fn();
  std::vector<double> cpu, wall;
  cpu.reserve(reps);
  wall.reserve(reps);
  for (std::size_t i = 0; i < reps; ++i) {
    const Sample s = fn();
    cpu.push_back(s.cpu);
    wall.push_back(s.wall);
  }
  return {summarize(cpu).p50, summarize(wall).p50};
}

struct Row {
  std::size_t nodes = 0;
  std::size_t accesses = 0;
  std::size_t regions = 0;
  std::size_t edges = 0;
  std::size_t reps = 0;
  Medians prepare, frontier, summary, lower;
};

Row measure(Fixture& f, std::size_t nodes, std::size_t iterations) {
  std::mt19937_64 rng(kSeed + nodes);
  const std::vector<RecipeOp> recipe = make_recipe(nodes, rng);
  const Uses uses = make_uses(f, recipe);
  const LoweringInput lowering = make_lowering(f, recipe);
  Row row;
  row.nodes = nodes;
  row.accesses = uses.flat.size();
  row.regions = lowering.runs.size();
  // About three million accesses per measurement, at least 30 repetitions.
  row.reps = iterations ? iterations
                        : std::max<std::size_t>(30, std::min<std::size_t>(5000, 3'000'000 / row.accesses));
  const std::size_t warmup = iterations ? 1 : std::max<std::size_t>(3, row.reps / 10);
  Stopwatch watch;

  row.prepare = median_of(warmup, row.reps, [&] {
    engine::GraphSpec spec = build_spec(f, recipe);  // prepare consumes it: untimed rebuild
    watch.start();
    auto prepared = f.session->prepare(std::move(spec));
    const Sample sample = watch.stop();
    check(prepared.status(), "prepare");
    row.edges = prepared.value()->dependencies().deps.size();
    return sample;  // the prepared graph is destroyed untimed
  });
  row.frontier = median_of(warmup, row.reps, [&] {
    watch.start();
    engine::DependencyLists deps = engine::infer_dependencies(uses.per_op);
    const Sample sample = watch.stop();
    if (deps.deps.size() != row.edges) {
      std::fprintf(stderr, "frontier disagrees with prepare: %zu vs %zu edges\n", deps.deps.size(), row.edges);
      std::exit(1);
    }
    return sample;
  });
  row.summary = median_of(warmup, row.reps, [&] {
    watch.start();
    engine::AccessSummary summary = engine::AccessSummary::build(uses.flat);
    return watch.stop();
  });
  devices::Device& host = f.engine->device_registry().at(0);
  std::vector<std::unique_ptr<devices::NativeRegion>> natives;
  natives.reserve(lowering.runs.size());
  row.lower = median_of(warmup, row.reps, [&] {
    natives.clear();  // untimed: the last repetition's regions
    watch.start();
    for (std::span<const devices::Operation> run : lowering.runs)
      natives.push_back(unwrap(host.lower(devices::RegionRequest::of(run)), "host lower"));
    return watch.stop();
  });
  return row;
}

constexpr const char* kUsage =
    "  --config N      graph size to run: 100, 1000 or 10000 (default: all three)\n"
    "  --iterations N  measured repetitions per measurement (default: ~3M accesses' worth)\n";

}  // namespace
}  // namespace accord::bench

int main(int argc, char** argv) {
  using namespace accord::bench;
  const Flags flags = parse_flags(argc, argv, kUsage);
  std::vector<std::size_t> sizes = {100, 1000, 10000};
  if (!flags.config.empty()) {
    const std::size_t n = std::strtoull(flags.config.c_str(), nullptr, 10);
    if (n == 0 || n > (1u << 24)) {
      std::fprintf(stderr, "--config takes a node count, e.g. 1000\n%s", kUsage);
      return 2;
    }
    sizes = {n};
  }

  Fixture fixture = make_fixture();
  std::vector<Row> rows;
  for (std::size_t n : sizes) rows.push_back(measure(fixture, n, flags.iterations));

  std::printf("prepare_bench: %zu HostVisible buffers of %zu KiB, seed %llu; medians of per-repetition\n",
              kBuffers, kBufferBytes / 1024, static_cast<unsigned long long>(kSeed));
  std::printf("  thread CPU time (wall-time medians in the breakdown). Mix: 15%% fill (1 use), 35%% copy\n");
  std::printf("  (2 uses), 50%% accord.add_f32 (3 uses); slice offsets and lengths on a 1 KiB grain\n");
  print_machine_line();
  std::printf("\n");
  std::printf("%8s | %9s | %20s | %9s | %18s | %15s\n", "N", "accesses", "prepare median (us)",
              "ns/access", "frontier ns/access", "ratio to N=100");
  std::printf("---------+-----------+----------------------+-----------+--------------------+----------------\n");
  const double base = rows.front().prepare.cpu / static_cast<double>(rows.front().accesses);
  for (const Row& r : rows) {
    const double a = static_cast<double>(r.accesses);
    std::printf("%8zu | %9zu | %20.1f | %9.1f | %18.1f | %15.2f\n", r.nodes, r.accesses, r.prepare.cpu / 1000.0,
                r.prepare.cpu / a, r.frontier.cpu / a, (r.prepare.cpu / a) / base);
  }
  std::printf("\nbreakdown, ns per access (CPU time): each part timed alone on the same input;\n");
  std::printf("rest = prepare - frontier - summary - lower: validation, regions, retention, slots, frees,\n");
  std::printf("and the cache misses the parts take inside prepare but not when timed alone on hot data\n");
  std::printf("%8s | %6s | %8s | %6s | %8s | %8s | %8s | %8s | %8s | %12s\n", "N", "reps", "regions", "edges",
              "prepare", "frontier", "summary", "lower", "rest", "prepare wall");
  std::printf("---------+--------+----------+--------+----------+----------+----------+----------+----------+"
              "-------------\n");
  for (const Row& r : rows) {
    const double a = static_cast<double>(r.accesses);
    const double rest = r.prepare.cpu - r.frontier.cpu - r.summary.cpu - r.lower.cpu;
    std::printf("%8zu | %6zu | %8zu | %6zu | %8.1f | %8.1f | %8.1f | %8.1f | %8.1f | %12.1f\n", r.nodes, r.reps,
                r.regions, r.edges, r.prepare.cpu / a, r.frontier.cpu / a, r.summary.cpu / a, r.lower.cpu / a,
                rest / a, r.prepare.wall / a);
  }
  return 0;
}
