//===- kiln/kiln.h - Kiln's public C++ API ----------------------*- C++ -*-===//
//
// What an embedding GPU runtime uses, and all it needs to include: no LLVM
// type, no LLVM header, no exception. docs/API.md explains the model;
// docs/GettingStarted.md goes from nothing to a running kernel.
//
//   Device    the CPU device: compiles kernels (memory, store or compiler),
//             owns the task arena the cubes run on.
//   Kernel    a handle on a loaded kernel, obtained once; launching it never
//             prints, parses or hashes the kernel again.
//   Buffer    host memory (owned by Kiln, or the embedder's, wrapped);
//   BufferView  a typed window into a buffer: byte offset, element type,
//             element count. Tensors of a runtime's pool are views.
//   Stream    an in-order queue of launches and copies; launch() returns
//             at once. Event: a point in a stream, waited on by the host or
//             by another stream.
//   Status / Result<T>: an ErrorCode to branch on, and a message that says
//             what was wrong and where.
//
// Thread safety: every member of Device, Kernel, Stream and Event may be
// called from several threads at once, except that one Stream object is an
// in-order queue (submissions from several threads interleave in whatever
// order they arrive). Handles (Kernel, Buffer, Stream, Event) are cheap
// copies of a shared reference.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

/// The IR kernel of kiln/IR/Kernel.h, as kiln/IR/Builder.h makes it. Only
/// needed by embedders that build kernels in memory instead of as text.
struct IRKernel;

namespace api {

//===-- Errors ------------------------------------------------------------===//

/// What went wrong, for an embedder to branch on. The values are those of
/// the C API's kiln_status (kiln-c/kiln.h) and never change.
enum class ErrorCode : int {
  Ok = 0,
  /// A null, empty, destroyed or out-of-range argument of an API call.
  InvalidArgument = 1,
  /// The kernel does not parse or does not verify; the message holds every
  /// located diagnostic ("FILE:LINE:COL: error: ...").
  InvalidKernel = 2,
  /// The launch does not fit the kernel: argument count, kinds, types,
  /// access, a view's bounds or element alignment, cube count. The message
  /// names the parameter. (Overlapping views are not an error: they get the
  /// variant compiled for buffers that may alias.)
  InvalidLaunch = 3,
  /// Memory could not be had (a buffer, a scratch area).
  OutOfMemory = 4,
  /// The persistent store could not be used as asked: a device created with
  /// an explicit StoreDir and a ReadWrite store that cannot be made or
  /// trusted there. (The environment's default store never fails a call: a
  /// store that cannot be used only costs recompilations.)
  StoreFailure = 5,
  /// No such kernel (a name not in the text, an id not loaded).
  NotFound = 6,
  /// The work was not run because a stream it waited for (through an event)
  /// failed, or because its device was destroyed; or a launch was stopped
  /// while it ran, by Stream::cancel or at its deadline
  /// (Stream::setLaunchTimeout). (Work submitted to a failed stream gets
  /// that stream's own failure back.)
  Cancelled = 7,
  /// Anything else: a bug of Kiln's or a host that cannot run it.
  Internal = 8,
  /// The launch ran, but its kernel misused a barrier object in a way only
  /// running it shows (a wait whose phase can never complete, more arrivals
  /// than a phase expects): docs/LangRef.md §13.5. Every cube ran to its
  /// end; what the launch wrote is unspecified. The message names the
  /// operation ("barrier_wait %bar at 12:3 (operation #7)").
  KernelFault = 9,
};

/// "ok", "invalid argument", "invalid kernel", ...
const char *errorCodeName(ErrorCode Code);

/// Success, or an error code with its message.
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;
  Status(ErrorCode TheCode, std::string TheMessage)
      : Code(TheCode), Message(std::move(TheMessage)) {}
  static Status success() { return Status(); }

  bool ok() const { return Code == ErrorCode::Ok; }
  ErrorCode code() const { return Code; }
  /// Empty on success.
  const std::string &message() const { return Message; }
  /// "invalid launch: launch of kernel 'vadd': ..." ("ok" on success).
  std::string str() const;

private:
  ErrorCode Code = ErrorCode::Ok;
  std::string Message;
};

/// A value or the Status saying why there is none.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T Value) : V(std::in_place_index<0>, std::move(Value)) {}
  /// \p Error must not be a success.
  Result(Status Error) : V(std::in_place_index<1>, std::move(Error)) {
    if (std::get<1>(V).ok())
      std::get<1>(V) = Status(ErrorCode::Internal, "Result made of a success");
  }

  bool ok() const { return V.index() == 0; }
  /// Success when ok().
  Status status() const { return ok() ? Status() : std::get<1>(V); }
  /// Only when ok().
  T &value() & { return std::get<0>(V); }
  const T &value() const & { return std::get<0>(V); }
  T &&value() && { return std::get<0>(std::move(V)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  /// Moves the value out: `*std::move(R)`, `*Device.loadKernel(...)`.
  T &&operator*() && { return std::move(*this).value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  std::variant<T, Status> V;
};

//===-- Types -------------------------------------------------------------===//

/// The IR's scalar types, in the IR's order (docs/LangRef.md).
enum class ScalarType : uint8_t {
  Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64,
  // Minifloat storage types (docs/LangRef.md §3.3).
  F8E4M3, F8E5M2, F6E2M3, F6E3M2, F4E2M1, F4E2M1X2, UE8M0,
};

/// The element type of a buffer or a value: a scalar, or a line
/// `vec<N x T>` of N in {1, 2, 3, 4, 8, 16} lanes (packed in memory).
struct ElementType {
  ScalarType Scalar = ScalarType::F32;
  uint8_t Lanes = 0; ///< 0: a scalar; otherwise a line of this many lanes

  static constexpr ElementType scalar(ScalarType S) { return {S, 0}; }
  static constexpr ElementType line(ScalarType S, unsigned Lanes) {
    return {S, static_cast<uint8_t>(Lanes)};
  }
  /// Parses the IR spelling: "f32", "vec<4 x f32>".
  static Result<ElementType> parse(std::string_view Text);

  /// Bytes of one element (a `vec<3 x f32>` is 12).
  unsigned sizeInBytes() const;
  /// The alignment a binding of this element type needs: its scalar's size.
  unsigned alignment() const;
  /// The IR spelling.
  std::string str() const;
  friend bool operator==(const ElementType &, const ElementType &) = default;
};

/// What a kernel may do with a buffer parameter, or what a binding allows.
enum class Access : uint8_t { Read, Write, ReadWrite };

/// A cube count or a cube shape. A cube count with a zero in any dimension
/// is a launch of no cubes: it succeeds and runs nothing (as vkCmdDispatch
/// does); its arguments are still checked.
struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
};

//===-- Buffers and views -------------------------------------------------===//

namespace detail {
struct BufferState;
struct KernelState;
struct DeviceState;
struct StreamState;
struct EventState;
} // namespace detail

class BufferView;

/// Host memory a launch binds. A shared handle: work queued on a stream
/// keeps the memory alive until it has run, so dropping the last handle
/// early is safe. A default-constructed Buffer is null (valid() is false).
class Buffer {
public:
  /// Bytes a Kiln-allocated buffer is aligned to.
  static constexpr uint64_t Alignment = 64;

  /// \p Bytes of zeroed memory, 64-byte aligned. Zero bytes gives a valid,
  /// empty buffer. OutOfMemory when it cannot be had (or exceeds the host's
  /// physical memory).
  static Result<Buffer> allocate(uint64_t Bytes);
  /// The embedder's memory: \p Bytes at \p Data, not owned, not copied. It
  /// must stay valid until every piece of work that uses it has run.
  /// InvalidArgument for a null \p Data with a non-zero size.
  static Result<Buffer> wrap(void *Data, uint64_t Bytes);

  Buffer() = default;
  bool valid() const { return S != nullptr; }
  void *data() const;
  uint64_t size() const;

  /// \p Count elements of \p Type starting \p ByteOffset bytes in. Checked
  /// when bound (bounds, alignment), not here.
  BufferView view(ElementType Type, uint64_t ByteOffset, uint64_t Count) const;
  /// The whole buffer as elements of \p Type (size() / element size).
  BufferView view(ElementType Type) const;

private:
  friend struct detail::BufferState;
  std::shared_ptr<detail::BufferState> S;
};

/// A typed window into a buffer (a tensor in a runtime's memory pool). Any
/// byte offset that is a multiple of the element's alignment may be bound;
/// the kernel variant that runs assumes only what the binding gives.
class BufferView {
public:
  BufferView() = default;
  BufferView(Buffer Buf, ElementType ElemType, uint64_t Offset,
             uint64_t Elements)
      : B(std::move(Buf)), Type(ElemType), ByteOffset(Offset),
        Count(Elements) {}

  const Buffer &buffer() const { return B; }
  ElementType type() const { return Type; }
  uint64_t byteOffset() const { return ByteOffset; }
  uint64_t count() const { return Count; }
  uint64_t sizeInBytes() const { return Count * Type.sizeInBytes(); }
  /// The first element's address (null for a null buffer).
  void *data() const;

private:
  Buffer B;
  ElementType Type;
  uint64_t ByteOffset = 0;
  uint64_t Count = 0;
};

/// One launch argument, in parameter order: a view (for a buffer parameter)
/// or a value (its bytes are copied into the argument).
/// The most dimensions of a tensor binding (docs/LangRef.md §16) and of a
/// tensor map (§17); the largest box dimension of a tensor map.
inline constexpr size_t MaxTensorRank = 8;
inline constexpr size_t MaxTensorMapRank = 5;
inline constexpr uint64_t MaxTensorMapBoxDim = 256;
/// Im2col tensor maps (docs/LangRef.md §17.7): the most channels per pixel
/// and pixels per column, and the range of a pixel box corner.
inline constexpr uint64_t MaxIm2colChannels = 256;
inline constexpr uint64_t MaxIm2colPixels = 1024;
inline constexpr int64_t MinIm2colCorner = -32768;
inline constexpr int64_t MaxIm2colCorner = 32767;

class Arg {
public:
  static constexpr size_t MaxValueBytes = 128; ///< vec<16 x f64>

  /// \p Access is what the binding allows: a Read binding is refused for a
  /// parameter the kernel may write.
  static Arg buffer(BufferView View, Access Allowed = Access::ReadWrite);
  /// A view bound as a tensor (docs/LangRef.md §16): its \p Shape and
  /// \p Strides in elements (a line is one), outermost first; empty
  /// \p Strides: contiguous row-major. The kernel reads them with shape,
  /// stride, rank and tensor_len; accesses stay checked against the view's
  /// element count. Checked at launch (InvalidLaunch, naming the
  /// parameter): rank 1 to MaxTensorRank, one stride per dimension, every
  /// value and the shape's product within u32.
  static Arg tensor(BufferView View, std::span<const uint64_t> Shape,
                    std::span<const uint64_t> Strides = {},
                    Access Allowed = Access::ReadWrite);
  /// A tensor map (docs/LangRef.md §17), for a tensor_map parameter: a
  /// tensor as above and the \p Box its copies move, one dimension per
  /// tensor dimension. Checked at launch too: rank 1 to MaxTensorMapRank,
  /// the rank the kernel's copies use, box dimensions 1 to
  /// MaxTensorMapBoxDim.
  static Arg tensorMap(BufferView View, std::span<const uint64_t> Shape,
                       std::span<const uint64_t> Strides,
                       std::span<const uint64_t> Box,
                       Access Allowed = Access::ReadWrite);
  /// An im2col tensor map (docs/LangRef.md §17.7), for a
  /// `tensor_map<T, ACCESS, im2col>` parameter: a tensor of rank 3 to 5
  /// (N, spatial dimensions, C) as above, the pixel box's \p Lower and
  /// \p Upper corners (one per spatial dimension, MinIm2colCorner to
  /// MaxIm2colCorner), and what one load copies: \p ChannelsPerPixel
  /// (1 to MaxIm2colChannels) channels of \p PixelsPerColumn (1 to
  /// MaxIm2colPixels) pixels. Checked at launch, naming the parameter.
  static Arg tensorMapIm2col(BufferView View, std::span<const uint64_t> Shape,
                             std::span<const uint64_t> Strides,
                             std::span<const int64_t> Lower,
                             std::span<const int64_t> Upper,
                             uint64_t ChannelsPerPixel,
                             uint64_t PixelsPerColumn,
                             Access Allowed = Access::ReadWrite);
  /// A value of \p Type given by its bytes (packed lanes; bool is one byte).
  /// A size other than the type's is refused at launch.
  static Arg value(ElementType Type, const void *Bytes, size_t Size);
  static Arg f32(float V);
  static Arg f64(double V);
  static Arg i32(int32_t V);
  static Arg u32(uint32_t V);
  static Arg i64(int64_t V);
  static Arg u64(uint64_t V);
  static Arg boolean(bool V);

  bool isBuffer() const { return IsBuffer; }
  const BufferView &view() const { return View; }
  Access access() const { return BufferAccess; }
  ElementType type() const { return IsBuffer ? View.type() : ValueType; }
  const uint8_t *valueBytes() const { return Bytes.data(); }
  size_t valueSize() const { return Size; }
  /// Whether a shape was given (tensor, tensorMap), and a box (tensorMap).
  bool hasShape() const { return HasShape; }
  bool hasBox() const { return HasBox; }
  std::span<const uint64_t> shape() const { return Shape; }
  std::span<const uint64_t> strides() const { return Strides; }
  std::span<const uint64_t> box() const { return Box; }
  /// Whether im2col parameters were given (tensorMapIm2col), and them.
  bool hasIm2col() const { return HasIm2col; }
  std::span<const int64_t> im2colLower() const { return Lower; }
  std::span<const int64_t> im2colUpper() const { return Upper; }
  uint64_t channelsPerPixel() const { return ChannelsPerPixel; }
  uint64_t pixelsPerColumn() const { return PixelsPerColumn; }

private:
  bool IsBuffer = false;
  bool HasShape = false, HasBox = false, HasIm2col = false;
  std::vector<uint64_t> Shape, Strides, Box;
  std::vector<int64_t> Lower, Upper;
  uint64_t ChannelsPerPixel = 0, PixelsPerColumn = 0;
  BufferView View;
  Access BufferAccess = Access::ReadWrite;
  ElementType ValueType;
  std::array<uint8_t, MaxValueBytes> Bytes{};
  size_t Size = 0;
};

//===-- Kernels -----------------------------------------------------------===//

/// One parameter of a loaded kernel.
struct ParameterInfo {
  std::string Name; ///< without '%'
  bool IsBuffer = false;
  ElementType Type; ///< a buffer's element type, or the value's type
  Access BufferAccess = Access::ReadWrite; ///< buffers only
  /// A tensor_map parameter (docs/LangRef.md §17): bind it with
  /// Arg::tensorMap, or Arg::tensorMapIm2col when IsIm2col.
  bool IsTensorMap = false;
  /// An im2col tensor map (§17.7).
  bool IsIm2col = false;
};

/// Where a kernel handle's code first came from.
enum class KernelOrigin { Memory, Store, Compiled };

/// How a kernel is compiled.
struct KernelOptions {
  /// The runtime's own id for the kernel: it must change whenever the kernel
  /// does (the store still checks a hash of the IR). Empty: an id derived
  /// from the kernel's canonical text.
  std::string Id;
  /// The file named in diagnostics; empty: "<input>" for text, "<builder>"
  /// for a kernel made in memory.
  std::string FileName;
  /// Bounds-checked code (an out-of-bounds load reads 0, a store is
  /// dropped) or not (an out-of-bounds access is the kernel's bug).
  bool BoundsChecked = true;
};

/// The variants Kernel::prepare makes ready (docs/API.md, "Variants"). A
/// launch picks its kernel's variant by what its bindings give: every view
/// 64-byte aligned or not, a written view overlapping another or not.
/// Loading a kernel links the aligned, non-overlapping variant; another is
/// compiled by the first launch that needs it, unless it was prepared. The
/// defaults name every variant a launch can pick.
struct PrepareOptions {
  /// The variants for views not 64-byte aligned (a tensor at any offset
  /// of a pool).
  bool Unaligned = true;
  /// The variants for overlapping or in-place bindings.
  bool MayAlias = true;
};

/// A handle on a loaded kernel. Copies share it. Launching a handle needs
/// no lookup: the variants it has linked are kept in the handle. The
/// handle keeps the code of those variants linked (the JIT session stays
/// while one does); a variant not linked yet needs its device, and fails
/// with Cancelled once the device is destroyed. Device::unloadKernel makes
/// the device forget it.
class Kernel {
public:
  Kernel() = default;
  bool valid() const { return S != nullptr; }
  const std::string &name() const;
  /// The id it is kept under (KernelOptions::Id or the derived one).
  const std::string &id() const;
  Dim3 cubeDim() const;
  uint32_t planeDim() const;
  std::span<const ParameterInfo> parameters() const;
  KernelOrigin origin() const;
  bool boundsChecked() const;

  /// Makes the variants \p Options names ready ahead of time, so that no
  /// launch of this kernel ever compiles: those not linked yet are served
  /// as one batch, compiled in parallel (DeviceConfig::BatchThreads) or
  /// loaded from the store, and kept in the store like any other. Variants
  /// already linked cost nothing. Every handle on the kernel shares them.
  /// InvalidArgument for a null handle; Cancelled once the device is
  /// destroyed; a variant that does not compile gives its error (the others
  /// are kept).
  Status prepare(const PrepareOptions &Options = {}) const;

private:
  friend struct detail::KernelState;
  std::shared_ptr<detail::KernelState> S;
};

//===-- Streams and events ------------------------------------------------===//

/// A point in a stream's work. Complete once everything queued before it on
/// its stream has run (or been skipped after a failure).
class Event {
public:
  Event() = default;
  bool valid() const { return S != nullptr; }
  /// Whether it is complete; never blocks.
  bool isComplete() const;
  /// Waits until it is complete; the status of the work before it: success,
  /// or the first failure of its stream (that failure's code and message).
  /// From a debug-print callback of a launch on its stream, while it is
  /// incomplete: InvalidArgument at once (it would wait for the callback).
  Status synchronize() const;

private:
  friend struct detail::EventState;
  std::shared_ptr<detail::EventState> S;
};

/// An in-order queue of work on its device's arena. Work of one stream runs
/// one item at a time, in submission order; work of different streams runs
/// at once. A failure (a launch that does not validate, a scratch area that
/// cannot be had) makes the stream *failed*: every later item is skipped
/// until resetError(). Other streams and the device are unaffected.
class Stream {
public:
  Stream() = default;
  bool valid() const { return S != nullptr; }

  /// Queues a launch and returns at once. The launch is checked here (the
  /// kernel variant for the bindings' real alignment and overlap is chosen,
  /// compiled if it is new and was not prepared: Kernel::prepare); any
  /// error (a null or foreign kernel, a launch that does not fit it, a
  /// variant that does not compile) is returned and
  /// also fails the stream, since the work after it was meant to follow it.
  /// On a failed stream nothing is queued and the stream's error comes back.
  /// Buffers bound stay alive until the launch has run.
  Status launch(const Kernel &K, Dim3 CubeCount, std::span<const Arg> Args);
  Status launch(const Kernel &K, Dim3 CubeCount,
                std::initializer_list<Arg> Args) {
    return launch(K, CubeCount, std::span<const Arg>(Args.begin(), Args.size()));
  }
  /// An indirect launch (as vkCmdDispatchIndirect): the cube count is the
  /// three `u32` (x, y, z) at the start of \p CubeCounts, a view of at
  /// least 3 `u32`, read when the launch runs, after the work queued before
  /// it on this stream (a kernel earlier in the stream may have written
  /// them). Checked here as launch() checks; the count itself when the
  /// launch runs, as launch() checks it: more than 2^32-1 cubes fails the
  /// stream then, with InvalidLaunch. A zero in any dimension runs
  /// nothing.
  Status launchIndirect(const Kernel &K, const BufferView &CubeCounts,
                        std::span<const Arg> Args);
  Status launchIndirect(const Kernel &K, const BufferView &CubeCounts,
                        std::initializer_list<Arg> Args) {
    return launchIndirect(K, CubeCounts,
                          std::span<const Arg>(Args.begin(), Args.size()));
  }
  /// Queues a copy of \p Bytes from host memory \p Src into \p Dst at
  /// \p DstOffset. \p Src must stay valid until the copy has run.
  Status copyToBuffer(const Buffer &Dst, uint64_t DstOffset, const void *Src,
                      uint64_t Bytes);
  /// Queues a copy of \p Bytes of \p Src at \p SrcOffset into host memory
  /// \p Dst, which must stay valid until the copy has run.
  Status copyFromBuffer(void *Dst, const Buffer &Src, uint64_t SrcOffset,
                        uint64_t Bytes);
  /// Queues a copy between buffers (the ranges may overlap: memmove).
  Status copyBuffer(const Buffer &Dst, uint64_t DstOffset, const Buffer &Src,
                    uint64_t SrcOffset, uint64_t Bytes);
  /// An event complete once everything queued so far has run. On a failed
  /// stream it is complete at once, with the stream's failure (so a stream
  /// waiting for it fails too).
  Result<Event> record();
  /// Later work on this stream waits until \p E is complete. When \p E's
  /// stream failed, this stream fails with Cancelled and that message.
  Status wait(const Event &E);
  /// Waits until everything queued so far has run; the stream's status.
  /// From a debug-print callback of a launch on this stream:
  /// InvalidArgument at once (it would wait for the callback).
  Status synchronize();
  /// Success, or the failure that stopped the stream; never blocks.
  Status status() const;
  /// Waits for the queued work, then clears the failure so that new work
  /// runs again; returns the failure it cleared (success if none). From a
  /// debug-print callback of a launch on this stream (inCallback()):
  /// InvalidArgument, nothing cleared (it would wait for the callback).
  Status resetError();
  /// Whether this thread is running a debug-print callback of a launch on
  /// this stream, where synchronize() and resetError() are refused
  /// (docs/API.md, "Callbacks").
  bool inCallback() const;

  /// Abandons the stream's work and returns at once: the launch running
  /// now stops at its next poll (its loops poll at every iteration, its
  /// cubes as they end: docs/API.md, "Stopping a launch"), and every item
  /// not yet run is skipped. The stream fails with Cancelled ("the stream
  /// was cancelled"; an earlier failure is kept), its events complete with
  /// that failure, and it stays failed until resetError(). The buffers the
  /// stopped launch may write hold unspecified contents. Other streams and
  /// the device are unaffected, and get the threads back once the launch
  /// has stopped. synchronize() waits for that.
  Status cancel();
  /// Each launch queued on this stream after this call may run for at most
  /// \p Milliseconds from when it starts running (0, the default: no
  /// limit). One that runs longer is stopped as cancel() stops it, and
  /// fails the stream with Cancelled, a message naming the limit; the
  /// work queued after it is skipped until resetError().
  Status setLaunchTimeout(uint64_t Milliseconds);

private:
  friend struct detail::StreamState;
  std::shared_ptr<detail::StreamState> S;
};

//===-- Collectives -------------------------------------------------------===//

/// How an all-reduce combines its members' elements.
enum class ReduceOp : uint8_t { Sum = 0, Max = 1, Min = 2 };

/// One device's part in a collective: a stream of that device, which orders
/// the collective with the device's other work, and the view it gives and
/// gets back.
struct CollectiveMember {
  Stream OnStream;
  BufferView View;
};

/// All-reduce (as a collective library's): every member's view gets, element
/// by element, the sum, max or min over all the members' views, as they hold
/// after the work queued before on each member's stream; the work queued
/// after it on each stream sees the result. Returns at once: the reduction
/// runs on the first member's stream once every member's stream has reached
/// it (an event per stream; nothing blocks a thread), the other streams
/// wait for it. Element types: signed and unsigned integers (sums wrap),
/// f16, bf16, f32, f64 and lines of them (lane by lane); sums in member
/// order, rounded at each addition; a NaN wins a max or min, and -0 orders
/// below +0 (docs/API.md, "Collectives"). One member copies nothing and
/// changes nothing.
/// InvalidArgument, nothing queued: no member, a null stream or view, two
/// streams of one device, views of different element types or counts,
/// overlapping views, a view out of its buffer's bounds or misaligned, an
/// element type that cannot be reduced. A failed member stream: its error,
/// nothing queued. A stream that fails before it reaches the collective
/// fails the others with Cancelled (their events carry it).
Status allReduce(std::span<const CollectiveMember> Members, ReduceOp Op);

//===-- The device --------------------------------------------------------===//

/// Which persistent store a device uses.
enum class StoreMode {
  Environment, ///< KILN_CACHE decides (the default)
  Off,         ///< none: kernels are kept in memory only
  ReadWrite,   ///< read and write, whatever KILN_CACHE says
  ReadOnly,    ///< serve stored kernels, never write
};

/// The most threads DeviceConfig::Threads and BatchThreads may ask for: far
/// above any machine's cores (more than the cores is capped to them), low
/// enough that a count no machine has is refused as a mistake.
inline constexpr unsigned MaxThreads = 4096;

struct DeviceConfig {
  /// Threads the cubes run on; 0: all cores; at most MaxThreads.
  unsigned Threads = 0;
  /// Compile threads of loadKernels; 0: all cores; at most MaxThreads.
  unsigned BatchThreads = 0;
  unsigned OptLevel = 3; ///< 0..3
  /// Empty: the host CPU. Else a CPU LLVM knows ("znver3"), x86-64, whose
  /// instruction set the host has: the device runs what it compiles.
  std::string CPU;
  /// `-mattr`-style overrides on top of the host's ("-avx512f"); empty: the
  /// host's. A feature LLVM does not know, one the host lacks, or one that
  /// leaves x86-64 ("-sse2") is refused.
  std::string Features;
  /// The store root; empty: KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln,
  /// else ~/.cache/kiln.
  std::string StoreDir;
  StoreMode Store = StoreMode::Environment;
  /// Shared memory a cube may use; 0: the default (64 KiB).
  uint64_t MaxSharedBytes = 0;
  /// Units a cube may have; 0: the default (1024).
  uint32_t MaxUnitsPerCube = 0;
  /// How long the launch threads keep spinning, waiting for more work,
  /// after a launch (like OpenMP's KMP_BLOCKTIME): a launch within that time
  /// does not pay for waking them. 0 lets them sleep at once.
  uint32_t KeepWarmMicroseconds = 2000;
  /// The least work a launch gives each of its threads, by the kernel's cost
  /// per cube measured in its earlier launches: a launch worth less than
  /// this runs on the calling thread, one worth a few times it on a few
  /// threads. 0: every launch is spread over every thread.
  uint32_t MinWorkPerThreadMicroseconds = 10;
  /// Receives each warning of the device (a damaged store entry purged and
  /// recompiled, a store folder not trusted, an entry that could not be
  /// written), one line of text, from whichever thread met it, with no Kiln
  /// lock held (it may call the device: docs/API.md, "Callbacks"). Kiln never
  /// writes to stderr itself: without a sink, warnings are only counted and
  /// the last few kept (Device::warningCount, Device::recentWarnings).
  std::function<void(std::string_view)> WarningSink;
  /// The store's remote tier, shared by a fleet of machines (docs/Store.md,
  /// "The remote tier"): "" takes KILN_REMOTE and its companion variables
  /// (none when unset); "off": none; else the server's address,
  /// "redis://HOST[:PORT][/DB]" or "unix:///PATH[?db=N]". A tier is only
  /// used behind a persistent store.
  std::string RemoteStore;
  /// The fleet key file that signs and checks remote entries ("":
  /// KILN_REMOTE_KEY). Required with a tier: there is no default key.
  std::string RemoteKeyFile;
  /// Take entries from the tier, never publish to it.
  bool RemoteReadOnly = false;
  /// Connect and request timeout of the tier; 0: KILN_REMOTE_TIMEOUT_MS,
  /// else 20.
  uint32_t RemoteTimeoutMilliseconds = 0;
};

/// What a device's kernels cost so far (Device::counters), counted in
/// kernel variants since the device was created.
struct DeviceCounters {
  /// Compiled (by loads, Kernel::prepare and launches).
  uint64_t Compiled = 0;
  /// Loaded from the persistent store instead of compiled.
  uint64_t StoreLoads = 0;
  /// Linked by a launch itself, as no load or prepare had made them ready
  /// (compiled, or loaded from the store or the device's memory).
  uint64_t LaunchLinks = 0;
  /// Of LaunchLinks, those compiled: 0 when every launch found its variant
  /// ready.
  uint64_t LaunchCompiles = 0;
};

/// The CPU device. Move-only; destroying it *drains* its streams (waits for
/// the work already queued to run): no queued work is lost, so a stream
/// running a kernel that never ends must be cancelled first
/// (Stream::cancel, Stream::setLaunchTimeout). Afterwards the
/// handles still held on it stay safe to use: a submission to one of its
/// streams, a new stream or a variant not yet compiled fails with Cancelled
/// ("the device was destroyed"); a stream's status and synchronize() report
/// what its work did; a kernel handle still answers name(), parameters()...
class Device {
public:
  /// InvalidArgument for an OptLevel above 3, Threads or BatchThreads above
  /// MaxThreads, a CPU or Features refused (see DeviceConfig), or
  /// remote-tier settings that
  /// cannot work (a bad address, a key file missing or readable by others:
  /// the message says which); Internal for a host without a JIT. (A tier
  /// set up by the environment alone that cannot work is a warning, and
  /// none.) An unreachable server is no error: only slowness, bounded.
  static Result<Device> create(const DeviceConfig &Config = {});
  Device() = default;
  Device(Device &&) noexcept;
  Device &operator=(Device &&) noexcept;
  ~Device();
  bool valid() const { return S != nullptr; }

  /// The kernel named \p Name in the `.kiln` text \p Text (empty \p Name:
  /// the text's only kernel), loaded from memory, the store, or compiled.
  /// InvalidKernel with located diagnostics when it does not parse or
  /// verify; NotFound when no kernel has that name.
  Result<Kernel> loadKernel(std::string_view Text, std::string_view Name = {},
                            const KernelOptions &Options = {});
  /// A kernel made in memory (kiln/IR/Builder.h). Its diagnostics name the
  /// kernel and the operation (its index and printed form).
  Result<Kernel> loadKernel(const kiln::IRKernel &K,
                            const KernelOptions &Options = {});
  /// Every kernel of \p Text, compiled as one parallel batch, in text order.
  /// Options.Id, when set, is a prefix: kernel `@f` gets Id + "." + "f".
  /// A text that does not parse gives one failed result (InvalidKernel, with
  /// the diagnostic), since it names no kernel.
  std::vector<Result<Kernel>> loadKernels(std::string_view Text,
                                          const KernelOptions &Options = {});
  /// The kernel this device loaded under \p Id (KernelOptions::Id or
  /// Kernel::id()), without the IR: no parsing, printing or hashing.
  /// NotFound when it is not loaded (or was unloaded).
  Result<Kernel> findKernel(std::string_view Id, bool BoundsChecked = true);
  /// Forgets \p K (every handle of the same id and bounds checking shares
  /// one state): findKernel and loadKernel no longer serve it from memory
  /// and \p K becomes null. Its code is freed once no copy of the handle and
  /// no queued launch holds it.
  Status unloadKernel(Kernel &K);
  /// How many kernels the device holds in memory.
  size_t loadedKernelCount() const;
  /// Kernel::prepare of each of \p Kernels, served as one parallel batch.
  /// InvalidArgument for a null handle or one of another device (nothing
  /// is prepared then); otherwise the first failure, the rest prepared.
  Status prepareKernels(std::span<const Kernel> Kernels,
                        const PrepareOptions &Options = {});
  /// The variants compiled, loaded from the store and linked by launches
  /// so far. Zeroes for a null device.
  DeviceCounters counters() const;

  /// A new stream on this device's arena.
  Result<Stream> createStream();
  /// Runs a launch and returns when every cube is done (no stream).
  Status launch(const Kernel &K, Dim3 CubeCount, std::span<const Arg> Args);
  /// Runs an indirect launch (Stream::launchIndirect): the cube count is
  /// read from \p CubeCounts now.
  Status launchIndirect(const Kernel &K, const BufferView &CubeCounts,
                        std::span<const Arg> Args);
  Status launch(const Kernel &K, Dim3 CubeCount,
                std::initializer_list<Arg> Args) {
    return launch(K, CubeCount, std::span<const Arg>(Args.begin(), Args.size()));
  }
  /// Waits for the work of every stream of this device; the first failure
  /// among them (streams stay failed: see Stream::resetError). From a
  /// debug-print callback of a launch on one of its streams:
  /// InvalidArgument at once (it would wait for the callback).
  Status synchronize();

  /// Threads the cubes may run on (DeviceConfig::Threads, or all cores;
  /// never more than the machine's cores).
  unsigned concurrency() const;
  /// Warnings the device met so far (see DeviceConfig::WarningSink).
  uint64_t warningCount() const;
  /// The last few warnings, oldest first.
  std::vector<std::string> recentWarnings() const;
  /// Whether a persistent store is in use: enabled, and its folder made
  /// (or, read-only, present) and trusted.
  bool hasStore() const;

  /// Where the text of debug_print goes (docs/LangRef.md §14): each launch
  /// of a kernel that prints hands its whole text to \p Handler, once, when
  /// its cubes are done (on the thread that ran the launch: a stream's for
  /// Stream::launch), with no Kiln lock held, and before the launch's
  /// status is returned. An empty
  /// handler restores the default: the process's standard output, flushed.
  /// Launches already running keep the handler they started with. Ignored
  /// on a null device.
  void setDebugPrintHandler(std::function<void(std::string_view Text)> Handler);
  /// Whether this thread is running one of this device's callbacks (its
  /// WarningSink, its debug-print handler). Destroying the device from
  /// there cannot drain it: the destructor then closes it on a thread of
  /// its own once the callback has returned (docs/API.md, "Callbacks").
  bool inCallback() const;

  /// The most bytes of debug text one launch keeps (default 1 MiB, like
  /// CUDA's printf FIFO): what its units print beyond is dropped, and the
  /// launch's text ends with "... N bytes of debug output dropped\n".
  void setDebugPrintLimit(uint64_t Bytes);

private:
  friend struct detail::DeviceState;
  std::shared_ptr<detail::DeviceState> S;
};

} // namespace api
} // namespace kiln

#endif // KILN_KILN_H
