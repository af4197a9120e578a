//===- Launch.h - Binding arguments and running the cubes of a launch -*- C++
//-*-===//
//
// An Executor runs launches of loaded kernels: it validates the bindings
// against the kernel's metadata, then runs the cubes [0, X*Y*Z) in ranges,
// one call of the cube function per range (never one per unit or per
// cube). A parallel launch cuts its cubes into one contiguous block per
// thread (OpenMP's static schedule), each thread starting on its own block
// and taking ranges from the back of the others' once it is empty; the
// threads are the caller, the workers of the executor's task arena, and
// host threads waiting for the launch's stream (helpWithCubes).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LAUNCH_H
#define KILN_RUNTIME_LAUNCH_H

#include "kiln/CPU/DebugPrint.h"
#include "kiln/CPU/LoadedKernel.h"
#include "kiln/IR/Tensor.h"
#include "kiln/IR/Type.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Watchdog.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>

namespace kiln {

/// The shape and strides a buffer is bound with (docs/LangRef.md §16), in
/// elements (a line counts as one), outermost first, and a tensor map's box
/// (§17), as given: entries past MaxTensorRank are not kept but counted,
/// and validateLaunch refuses what is out of range.
struct TensorLayout {
  bool HasShape = false; ///< false: the default rank 1, shape [count], strides [1]
  bool HasBox = false;   ///< a tensor map binding
  uint32_t Rank = 0;     ///< shape entries given
  uint32_t StrideCount = 0;
  uint32_t BoxRank = 0;
  std::array<uint64_t, MaxTensorRank> Shape{}, Strides{}, Box{};
  /// An im2col tensor map binding (§17.7): the pixel box's corners, one per
  /// spatial dimension, and what one load copies.
  bool HasIm2col = false;
  uint32_t LowerRank = 0, UpperRank = 0;
  std::array<int64_t, MaxTensorRank> Lower{}, Upper{};
  uint64_t ChannelsPerPixel = 0, PixelsPerColumn = 0;
};

/// One launch argument: a buffer (not owned: it must outlive the launch) or
/// a scalar/line value (its bytes are copied into the binding).
class ArgBinding {
public:
  /// Most bytes of a value: vec<16 x f64>.
  static constexpr size_t MaxValueBytes = 128;

  /// Binds \p B whole; \p Access says what the kernel may do with it (a
  /// read-only binding is refused for a parameter the kernel writes).
  static ArgBinding buffer(HostBuffer &B,
                           AccessKind Access = AccessKind::ReadWrite);
  /// Binds memory the embedder owns: \p Count elements of \p ElementType at
  /// \p Data.
  static ArgBinding buffer(void *Data, Type ElementType, uint64_t Count,
                           AccessKind Access = AccessKind::ReadWrite);
  /// A value of type \p Ty given by its \p Size bytes (packed lanes, as in
  /// memory; bool is one byte 0 or 1). A size that is not \p Ty's store size,
  /// or above MaxValueBytes, is kept as given and refused at launch.
  static ArgBinding value(Type Ty, const void *Bytes, size_t Size);
  static ArgBinding f32(float V);
  static ArgBinding f64(double V);
  static ArgBinding i32(int32_t V);
  static ArgBinding u32(uint32_t V);
  static ArgBinding i64(int64_t V);
  static ArgBinding u64(uint64_t V);
  static ArgBinding boolean(bool V);

  /// This buffer binding with a tensor shape and strides (docs/LangRef.md
  /// §16); empty \p Strides: contiguous row-major (the last dimension has
  /// stride 1).
  ArgBinding withShape(llvm::ArrayRef<uint64_t> Shape,
                       llvm::ArrayRef<uint64_t> Strides = {}) const;
  /// This binding with a tensor map's box (docs/LangRef.md §17), for a
  /// tensor_map parameter; give the shape too.
  ArgBinding withBox(llvm::ArrayRef<uint64_t> Box) const;
  /// This binding with an im2col tensor map's parameters (docs/LangRef.md
  /// §17.7), for a `tensor_map<T, ACCESS, im2col>` parameter; give the
  /// shape too. \p Lower and \p Upper are the pixel box's corners, one per
  /// spatial dimension (rank - 2).
  ArgBinding withIm2col(llvm::ArrayRef<int64_t> Lower,
                        llvm::ArrayRef<int64_t> Upper,
                        uint64_t ChannelsPerPixel,
                        uint64_t PixelsPerColumn) const;

  bool isBuffer() const { return IsBuffer; }
  Type type() const { return Ty; } ///< element type of a buffer
  AccessKind access() const { return Access; }
  void *bufferData() const { return Data; }
  uint64_t bufferCount() const { return Count; }
  const uint8_t *valueBytes() const {
    return BigValue ? BigValue.get() : Bytes.data();
  }
  size_t valueSize() const { return Size; }
  const TensorLayout &tensor() const;

private:
  /// What few bindings have is kept apart, and shared by copies, so that a
  /// plain binding stays small to copy and to queue (a stream keeps one per
  /// argument of each queued launch): a tensor layout (null: the default),
  /// and a value of more than InlineValueBytes.
  std::shared_ptr<const TensorLayout> Tensor;
  std::shared_ptr<const uint8_t[]> BigValue;
  static constexpr size_t InlineValueBytes = 16;
  /// A copy of the layout to change (a fresh one when there is none).
  TensorLayout &editTensor();
  bool IsBuffer = false;
  Type Ty;
  AccessKind Access = AccessKind::ReadWrite;
  void *Data = nullptr;
  uint64_t Count = 0;
  std::array<uint8_t, InlineValueBytes> Bytes{};
  size_t Size = 0;
};

/// A launch that ran and faulted (CubeABI.h's KernelFault; docs/LangRef.md
/// §13.5): misuse of a barrier object that only running the kernel shows.
/// Every cube ran to its end; what the launch wrote is unspecified.
class KernelFaultError : public llvm::ErrorInfo<KernelFaultError> {
public:
  static char ID;
  explicit KernelFaultError(std::string Message) : Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Message;
};

/// Checks a launch of a kernel with \p Metadata: the argument count, each
/// argument's kind (buffer or value), its type, its access (a read-only
/// binding for a written buffer) and size (a value of the wrong size), its
/// tensor shape, strides and box (docs/LangRef.md §16, §17), the
/// buffer alignment \p RequiredAlignment the code assumes, and the cube
/// count (the product within u32; a zero in any dimension is valid: such a
/// launch runs nothing). The error names the parameter.
llvm::Error validateLaunch(const CubeMetadata &Metadata,
                           std::array<uint32_t, 3> CubeCount,
                           llvm::ArrayRef<ArgBinding> Args,
                           uint32_t RequiredAlignment = 1);

/// Runs launches on a TBB task arena of its own. Thread-safe: launches from
/// several threads share the arena (each waits for its own cubes).
class Executor {
public:
  /// \p Threads is the arena's concurrency; 0 means all cores, and more
  /// than the machine's cores is capped to them (a Device refuses more than
  /// MaxThreads before it gets here). After a
  /// launch that used the arena's workers, they stay awake (spinning) for
  /// \p KeepWarmMicroseconds, so that the next launch or stream task within
  /// that time does not pay for waking them (docs/Performance.md, "Launches
  /// and dispatch"); 0 lets them sleep at once. Any new work ends the
  /// spinning at once.
  ///
  /// A launch is spread over only as many threads as its work is worth:
  /// each thread gets at least \p MinWorkPerThreadMicroseconds of cubes, by
  /// the kernel's cost per cube measured in its earlier launches (its first
  /// launch uses every thread). A launch worth less than that runs on the
  /// calling thread. 0 always spreads a launch over every thread.
  explicit Executor(
      unsigned Threads = 0,
      unsigned KeepWarmMicroseconds = DefaultKeepWarmMicroseconds,
      unsigned MinWorkPerThreadMicroseconds = DefaultMinWorkPerThread);
  static constexpr unsigned DefaultKeepWarmMicroseconds = 2000;
  /// The most threads a device's launches or batch compilations may be
  /// asked for (DeviceOptions::Threads and BatchThreads, the tools'
  /// --threads and -j, the APIs' thread counts): far above any machine's
  /// cores, which is all a request can have, and low enough that a count
  /// no machine has (a typo, a negative number wrapped round) is an error,
  /// not a wish.
  static constexpr unsigned MaxThreads = 4096;
  static constexpr unsigned DefaultMinWorkPerThread = 10;
  ~Executor();
  Executor(const Executor &) = delete;
  Executor &operator=(const Executor &) = delete;

  /// The arena's concurrency.
  unsigned concurrency() const;

  /// Validates (validateLaunch, with \p RequiredAlignment, or the kernel's
  /// own bufferAlignment() when it is 0; not when the caller says it has
  /// \p Validated this very launch already) and runs every cube of the launch,
  /// returning when all are done. A launch with a single range of cubes runs inline on
  /// the calling thread. Scratch arenas (64-byte aligned, at least the
  /// kernel's ScratchBytes) are kept and reused by later launches: one per
  /// slot of the task arena for parallel launches, one per calling thread
  /// for inline ones.
  ///
  /// With a \p Stop, the launch ends early once it is set (cancelled, or
  /// timed out by a Watchdog): the cubes running return at their next poll
  /// (CubeABI.h), those not started do not run, and the launch fails with
  /// an error of code std::errc::operation_canceled (cancelled) or
  /// std::errc::timed_out (a deadline) whatever it did; the buffers it may
  /// write hold unspecified contents. A stop already set runs nothing.
  llvm::Error launch(const LoadedKernel &Kernel,
                     std::array<uint32_t, 3> CubeCount,
                     llvm::ArrayRef<ArgBinding> Args,
                     uint32_t RequiredAlignment = 0, bool Validated = false,
                     LaunchStop *Stop = nullptr);

  /// The watchdog that times the launches of this executor's users out
  /// (a thread started by its first deadline).
  Watchdog &watchdog();

  /// Queues \p Work to run on one of the arena's threads and returns at
  /// once (tbb::task_arena::enqueue). Launches made from inside it run their
  /// cubes isolated: the thread waiting for them takes no unrelated work.
  void enqueue(std::function<void()> Work);

  /// Lets the calling thread, which is not one of the arena's (a host
  /// thread waiting for a stream or an event), run cubes of a parallel launch under way,
  /// within the launch's thread count: it takes ranges until none is left or
  /// \p Enough() is true, checked before each range. Returns false at once
  /// when no launch has cubes left to hand out. The waits of the public API
  /// call it, so that a host thread that waits adds its core to the
  /// device's, as the master thread of an OpenMP loop does.
  bool helpWithCubes(llvm::function_ref<bool()> Enough);

  /// Scratch arenas allocated (or grown) so far: stays put while launches
  /// reuse them.
  uint64_t scratchAllocations() const;

  /// debug_print (docs/LangRef.md §14): each launch of a kernel that
  /// prints hands its whole text to \p Handler once its cubes are done (an
  /// empty handler: standard output, writeDebugPrintToStdout). Launches
  /// already running keep the handler they started with.
  void setDebugPrintHandler(DebugPrintHandler Handler);
  /// The most bytes of debug text one launch keeps (default
  /// DefaultDebugPrintLimit); what is printed beyond is dropped and counted
  /// in a last line "... N bytes of debug output dropped".
  void setDebugPrintLimit(uint64_t Bytes);
  uint64_t debugPrintLimit() const;

  /// Launches so far that privatised the atomics of at least one buffer
  /// (CubeABI.h; docs/Lowering.md, "Privatised atomics"): a buffer whose
  /// metadata allows it, of at most 64 KiB and no more elements than the
  /// launch has units, gets a private copy per worker, merged at the end.
  uint64_t privatizedLaunches() const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace kiln

#endif // KILN_RUNTIME_LAUNCH_H
