//===- Corpus.h - The foreign-kernel corpus: benchmarks and backends -----===//
//
// The foreign-kernel corpus runs GPU benchmarks written by others (Rodinia's
// OpenCL kernels, translated one to one into Kiln IR) on three systems in one
// process: Kiln, an OpenCL CPU driver (PoCL) running the same OpenCL C, and a
// native OpenMP C++ version structured as the same sequence of parallel loops
// (one parallel loop per launch).
//
// A benchmark's host code is written once, against `Backend`: it makes its
// buffers, launches kernels by name over a grid of cubes (work-groups) and
// reads results back, exactly as the original host program does. Each backend
// runs that same sequence:
//   - kiln:   the kernels of bench/corpus/<bench>/<bench>.kiln, through the
//             public API (kiln/kiln.h), on one stream;
//   - opencl: the kernels of bench/corpus/<bench>/<bench>.cl, through the
//             OpenCL 1.2 C API, local size = the cube's shape;
//   - native: the functions registered with KILN_CORPUS_NATIVE, each one an
//             OpenMP parallel loop doing the launch's work.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BENCH_CORPUS_CORPUS_H
#define KILN_BENCH_CORPUS_CORPUS_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace corpus {

/// A grid or a cube shape; missing dimensions are 1.
struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  uint64_t count() const { return uint64_t(X) * Y * Z; }
};

/// A buffer made by a backend; an index into the backend's own table.
struct Buf {
  int Index = -1;
};

/// One kernel argument: a buffer or a scalar, in the kernel's parameter
/// order. Scalars carry their type, which must be the parameter's.
struct Arg {
  enum class Kind { Buffer, I32, U32, I64, U64, F32, F64 };
  Kind K = Kind::Buffer;
  Buf B;
  std::array<unsigned char, 8> Bytes{};

  static Arg buf(Buf B) {
    Arg A;
    A.K = Kind::Buffer;
    A.B = B;
    return A;
  }
  template <typename T> static Arg scalar(Kind K, T V) {
    Arg A;
    A.K = K;
    std::memcpy(A.Bytes.data(), &V, sizeof(T));
    return A;
  }
  static Arg i32(int32_t V) { return scalar(Kind::I32, V); }
  static Arg u32(uint32_t V) { return scalar(Kind::U32, V); }
  static Arg i64(int64_t V) { return scalar(Kind::I64, V); }
  static Arg u64(uint64_t V) { return scalar(Kind::U64, V); }
  static Arg f32(float V) { return scalar(Kind::F32, V); }
  static Arg f64(double V) { return scalar(Kind::F64, V); }
  size_t size() const {
    return K == Kind::I64 || K == Kind::U64 || K == Kind::F64 ? 8 : 4;
  }
};

/// What a native kernel function receives for one launch: the grid, the
/// cube shape and the arguments (buffers as host pointers).
struct NativeLaunch {
  Dim3 Cubes, Cube;
  std::vector<void *> Pointers; // per argument: the buffer's data, or null
  std::vector<Arg> Args;
  int Threads = 1;

  template <typename T> T *ptr(size_t I) const {
    return static_cast<T *>(Pointers.at(I));
  }
  template <typename T> T value(size_t I) const {
    T V;
    std::memcpy(&V, Args.at(I).Bytes.data(), sizeof(T));
    return V;
  }
};
using NativeKernelFn = void (*)(const NativeLaunch &);

/// A system the corpus runs on. A backend reports an error (a kernel that
/// does not compile, a launch the kernel refuses) by throwing an exception
/// that says what failed and where; the harness prints it and counts the
/// benchmark as failed on that system.
class Backend {
public:
  virtual ~Backend() = default;
  virtual const char *name() const = 0;
  /// A buffer of Bytes bytes holding Init (zeros when Init is null).
  virtual Buf create(size_t Bytes, const void *Init = nullptr) = 0;
  virtual void write(Buf B, const void *Src, size_t Bytes) = 0;
  virtual void read(Buf B, void *Dst, size_t Bytes) = 0;
  /// Launches kernel Name over Cubes cubes of shape Cube (the kernel's
  /// cube_dim; OpenCL's local size). In order with every other call.
  virtual void launch(const char *Name, Dim3 Cubes, Dim3 Cube,
                      std::initializer_list<Arg> Args) = 0;
  /// Waits for every launch so far.
  virtual void finish() = 0;

  template <typename T> Buf create(const std::vector<T> &Init) {
    return create(Init.size() * sizeof(T), Init.data());
  }
  template <typename T> void write(Buf B, const std::vector<T> &Src) {
    write(B, Src.data(), Src.size() * sizeof(T));
  }
  template <typename T> std::vector<T> read(Buf B, size_t Count) {
    std::vector<T> V(Count);
    read(B, V.data(), Count * sizeof(T));
    return V;
  }
};

/// One problem of a benchmark at a given size. The harness calls, for each
/// backend and each repetition: setup (not timed), run (timed, ends with
/// Backend::finish), check (after the first run only).
class Instance {
public:
  virtual ~Instance() = default;
  /// Makes the buffers and writes the inputs (again on every repetition:
  /// runs may update their buffers in place).
  virtual void setup(Backend &B) = 0;
  /// The host program's sequence of launches (and read-backs, where the
  /// original host code reads back between launches).
  virtual void run(Backend &B) = 0;
  /// Compares the outputs with the host's own reference computation; on a
  /// mismatch returns false and says where in Why.
  virtual bool check(Backend &B, std::string &Why) = 0;
  /// Launches in one run (for the per-launch time), counted by run().
  virtual unsigned launches() const = 0;
};

/// A benchmark of the corpus.
struct Benchmark {
  const char *Name;    // "lud"; the folder bench/corpus/<Name>/
  const char *Summary; // one line: what it computes and at what size
  /// Size: 0 the small problem of the tests, 1 the timed problem.
  std::function<std::unique_ptr<Instance>(int Size)> Make;
};

/// A registered native kernel. Kernel names repeat across benchmarks
/// (Rodinia's cfd and streamcluster both have a memset_kernel), so each one
/// belongs to the benchmark whose folder holds the file registering it.
struct NativeKernel {
  std::string Name;
  NativeKernelFn Fn;
  std::string Benchmark; // the folder name of the registering file
};

std::vector<Benchmark> &benchmarks();
std::vector<NativeKernel> &nativeKernels();
/// The name of the folder holding File ("a/b/lud/lud.cpp" gives "lud").
std::string folderOf(const char *File);

struct RegisterBenchmark {
  RegisterBenchmark(Benchmark B) { benchmarks().push_back(std::move(B)); }
};
struct RegisterNative {
  RegisterNative(const char *Name, NativeKernelFn F, const char *File) {
    nativeKernels().push_back({Name, F, folderOf(File)});
  }
};

/// Deterministic inputs: the same numbers on every system and machine.
class Random {
public:
  explicit Random(uint64_t Seed) : State(Seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t next() {
    State ^= State << 13;
    State ^= State >> 7;
    State ^= State << 17;
    return State;
  }
  /// Uniform in [0, 1).
  float unit() { return float(next() >> 40) * (1.0f / 16777216.0f); }
  /// Uniform integer in [0, N).
  uint32_t below(uint32_t N) { return uint32_t(next() % N); }

private:
  uint64_t State;
};

/// Relative-and-absolute closeness used by the checks: |a-b| <= Abs + Rel*|b|.
bool closeEnough(const float *Got, const float *Want, size_t N, double Rel,
                 double Abs, std::string &Why);

} // namespace corpus

#define KILN_CORPUS_CONCAT2(A, B) A##B
#define KILN_CORPUS_CONCAT(A, B) KILN_CORPUS_CONCAT2(A, B)
/// KILN_CORPUS_NATIVE(lud_diagonal, fn): the native version of a kernel.
#define KILN_CORPUS_NATIVE(NAME, FN)                                           \
  static ::corpus::RegisterNative KILN_CORPUS_CONCAT(NativeReg, __LINE__)(     \
      #NAME, FN, __FILE__)
/// KILN_CORPUS_BENCHMARK(lud, "summary", [](int Size) {...}).
#define KILN_CORPUS_BENCHMARK(NAME, SUMMARY, MAKE)                             \
  static ::corpus::RegisterBenchmark KILN_CORPUS_CONCAT(BenchReg, __LINE__)(   \
      ::corpus::Benchmark{#NAME, SUMMARY, MAKE})

#endif // KILN_BENCH_CORPUS_CORPUS_H
