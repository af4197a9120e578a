//===- ArgSpec.h - Launch arguments written as text (kiln-run) --*- C++ -*-===//
//
// Part of the tools' support library (KilnToolSupport), not of libkiln.a:
// the library has no use for it.
//
// The text forms kiln-run reads and writes (docs/Tools.md §3.2, §3.3), and
// the bounded reads and checked writes of the tools' files:
//   buffer SPEC  TYPE[COUNT]:zeros | fill=VALUE | iota | file=PATH, then
//                optionally :shape=AxBx... :strides=AxBx... :box=AxBx...
//   value SPEC   a literal of the parameter's type (kiln/IR/Literal.h)
//   cube count   X[,Y[,Z]]
// TYPE is an IR value type: `f32`, `vec<4 x f32>`.
//
// Lines: a VALUE for a line type is either one literal, used for every lane,
// or one literal per lane separated by commas (`1.0,2.0,3.0,4.0`, brackets
// `[...]` allowed) or by white space as `--print` writes them (`1.0 2.0`). `iota` gives lane j of element i the number i*N+j for a
// line of N lanes, converted to the element type: integers wrap modulo 2^bits,
// floats round to nearest, bool is false for 0 and true otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_SUPPORT_ARGSPEC_H
#define KILN_TOOLS_SUPPORT_ARGSPEC_H

#include "kiln/CPU/CubeMetadata.h"
#include "kiln/IR/Kernel.h"
#include "kiln/IR/Type.h"
#include "kiln/Runtime/Buffer.h"
#include "kiln/Runtime/Launch.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Reads an IR value type: a scalar name or `vec<N x T>` (spaces optional
/// around the parts).
llvm::Expected<Type> parseTypeText(llvm::StringRef Text);

struct BufferSpec {
  enum class InitKind { Zeros, Fill, Iota, File };
  Type ElementType;
  uint64_t Count = 0;
  InitKind Init = InitKind::Zeros;
  std::string Operand; ///< the VALUE of fill=, the PATH of file=
  /// `:shape=AxB...`, `:strides=...`, `:box=...` after the contents
  /// (docs/Tools.md §3.2): a tensor binding and a tensor map's box; empty
  /// when not given (strides then contiguous row-major).
  std::vector<uint64_t> Shape, Strides, Box;
  /// `:im2col=LOWER/UPPER/CHANNELS/PIXELS` (an im2col tensor map, §17.7):
  /// the pixel box corners (signed, 'x'-separated) and what a load copies.
  bool HasIm2col = false;
  std::vector<int64_t> Lower, Upper;
  uint64_t ChannelsPerPixel = 0, PixelsPerColumn = 0;
};

/// Whether \p Spec is written as a buffer (`TYPE[COUNT]:...`), not a value.
bool isBufferSpecText(llvm::StringRef Spec);

/// Parses `TYPE[COUNT]:INIT`. The fill VALUE is checked here already.
llvm::Expected<BufferSpec> parseBufferSpec(llvm::StringRef Spec);

/// The bytes of a value of type \p Ty written as \p Text (packed lanes,
/// little-endian, bool one byte).
llvm::Expected<std::vector<uint8_t>> parseValueText(llvm::StringRef Text,
                                                    Type Ty);

/// Allocates the buffer \p Spec describes and fills it. The file of `file=`
/// must hold exactly COUNT elements: a regular file of another size is
/// refused before anything is allocated; anything else (a pipe, a device
/// such as /dev/zero, a FIFO) is read for at most one byte more than the
/// buffer needs, so that a longer one is refused too and an endless one
/// costs no more than the buffer. A FIFO without a writer reads as empty.
llvm::Expected<HostBuffer> createBuffer(const BufferSpec &Spec);

/// The most bytes a tool reads of a `.kiln` input, a file or standard input:
/// 64 MiB, far above any real module, low enough that reading one never
/// threatens the machine's memory.
constexpr uint64_t MaxInputFileBytes = uint64_t(64) << 20;

/// The contents of \p Path ("-": standard input), refused beyond
/// \p MaxBytes before they are all read: a regular file by its size, and
/// anything else (a pipe, /dev/zero) once MaxBytes + 1 bytes came. Opening a
/// FIFO does not wait for a writer. Errors: "cannot read file: WHY" and
/// "larger than N bytes (the limit of a .kiln input)".
llvm::Expected<std::string>
readInputFile(llvm::StringRef Path, uint64_t MaxBytes = MaxInputFileBytes);

/// Writes \p Path ("-": standard output) with \p Write and closes it,
/// checking every step: an error of \p Write, or a failed write or close
/// ("cannot write 'PATH': No space left on device"), is returned with no
/// error left pending in the stream (raw_fd_ostream's destructor would
/// report it as an LLVM fatal error) and the regular file removed (a
/// device such as /dev/full never is). Opening: "cannot open 'PATH': WHY".
llvm::Error writeOutputFile(
    llvm::StringRef Path, bool Binary,
    llvm::function_ref<llvm::Error(llvm::raw_pwrite_stream &)> Write);

/// Whether writeOutputFile could open \p Path for writing, checked without
/// creating or changing anything, so that a tool can refuse an output it
/// cannot write before it does any work: an existing file must be writable
/// and not a folder; a new one needs a writable folder to go in. The error
/// is writeOutputFile's: "cannot open 'PATH': WHY". "-" is always fine.
llvm::Error checkOutputPath(llvm::StringRef Path);

/// Makes an LLVM fatal error (report_fatal_error, which would print
/// "LLVM ERROR: ..." and abort) or an allocation failure inside LLVM end the
/// tool like any other error: "TOOL: error: REASON" and exit status 1. A
/// last resort: the tools check what they can before LLVM sees it.
void installFatalErrorHandlers(const char *Tool);

/// Makes a reader that has gone away (`| head`, a closed standard error) a
/// failed write rather than a death: SIGPIPE is ignored, so writes fail with
/// EPIPE for the tool to report, and at exit the errors left on outs() and
/// errs() are cleared, which LLVM's stream destructors would otherwise turn
/// into a fatal error (an abort while static objects are destroyed). Call
/// it right after InitLLVM, built with InstallPipeSignalExitHandler false.
void survivePipeReadersGoingAway();

/// Flushes \p OS (standard output, say) and returns the error of any write
/// to it so far ("cannot write standard output: WHY"), clearing it so that
/// the stream's destructor does not turn it into an LLVM fatal error.
llvm::Error flushOrError(llvm::raw_fd_ostream &OS, llvm::StringRef What);

/// One element as kiln-run prints it, lanes of a line separated by single
/// spaces: integers in decimal, bool `true`/`false`, floats as the shortest
/// `%.Ng` text that reads back to the same bits ("10", "0.1", "0.33333334",
/// "1e+20"; `inf`, `-inf`, `nan`, or a `0x` pattern for other NaNs). Every
/// printed element is a valid value SPEC of its type.
std::string formatElement(const void *Element, Type Ty);

/// Parses `X[,Y[,Z]]`; missing dimensions are 1. Zero, junk or a value
/// above 2^32-1 is an error.
llvm::Expected<std::array<uint32_t, 3>> parseCubeCount(llvm::StringRef Text);

/// The parameters of \p K as a launch binds them (the same list the
/// lowering puts in CubeMetadata::Params).
std::vector<ParamMetadata> paramsOf(const IRKernel &K);

/// The arguments of a launch built from `NAME=SPEC` texts: Buffers[i] owns
/// the memory of parameter i when it is a buffer (empty otherwise), and
/// Bindings[i] binds parameter i. Buffers do not move when the struct does.
struct LaunchInputs {
  std::vector<HostBuffer> Buffers;
  std::vector<ArgBinding> Bindings;
};

/// Builds one binding per parameter of \p Params from \p NameSpecs
/// (`NAME=SPEC`, NAME with or without '%'). Every parameter must be given
/// exactly once; a missing, unknown or duplicated name, a buffer SPEC for a
/// value (or the reverse), a buffer whose TYPE is not the parameter's element
/// type and a literal that does not fit the type are errors naming the
/// parameter.
llvm::Expected<LaunchInputs>
bindArguments(llvm::ArrayRef<ParamMetadata> Params,
              llvm::ArrayRef<std::string> NameSpecs);

/// Splits `NAME=REST` (the form of --arg and --out); NAME loses a leading
/// '%'. An error when there is no '=' or NAME is empty.
llvm::Expected<std::pair<std::string, std::string>>
splitNameValue(llvm::StringRef Text, llvm::StringRef Option);

} // namespace kiln

#endif // KILN_TOOLS_SUPPORT_ARGSPEC_H
