//===- ArgSpec.cpp - Launch arguments written as text ---------------------===//

#include "support/ArgSpec.h"
#include "kiln/IR/Literal.h"
#include "kiln/IR/Minifloat.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;
using llvm::Twine;

static Error specError(const Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

Expected<Type> kiln::parseTypeText(StringRef Text) {
  StringRef T = Text.trim();
  if (T.consume_front("vec")) {
    T = T.ltrim();
    if (!T.consume_front("<") || !T.consume_back(">"))
      return specError("bad type '" + Text + "': expected vec<N x T>");
    auto [LanesText, ElemText] = T.split('x');
    uint64_t Lanes;
    if (LanesText.trim().getAsInteger(10, Lanes) ||
        !Type::isValidLineWidth(Lanes))
      return specError("bad type '" + Text +
                       "': a line has 1, 2, 3, 4, 8 or 16 lanes");
    auto Kind = parseScalarName(ElemText.trim());
    if (!Kind)
      return specError("bad type '" + Text + "': unknown element type '" +
                       ElemText.trim() + "'");
    return Type::line(*Kind, static_cast<unsigned>(Lanes));
  }
  auto Kind = parseScalarName(T);
  if (!Kind)
    return specError("unknown type '" + Text + "'");
  return Type::scalar(*Kind);
}

bool kiln::isBufferSpecText(StringRef Spec) {
  return Spec.contains('[') && Spec.contains(']') &&
         Spec.find('[') < Spec.find(']') && !Spec.trim().starts_with("[");
}

Expected<std::vector<uint8_t>> kiln::parseValueText(StringRef Text, Type Ty) {
  StringRef T = Text.trim();
  llvm::SmallVector<StringRef, 16> Parts;
  if (Ty.isLine()) {
    if (T.consume_front("[") && !T.consume_back("]"))
      return specError("bad " + Ty.str() + " value '" + Text +
                       "': missing ']'");
    // Lanes are separated by commas, or by white space as `--print` writes
    // them, so that every printed element reads back as a value spec.
    if (T.contains(','))
      T.split(Parts, ',');
    else
      llvm::SplitString(T, Parts, " \t");
    if (Parts.empty())
      Parts.push_back(T);
    if (Parts.size() != 1 && Parts.size() != Ty.lanes())
      return specError("bad " + Ty.str() + " value '" + Text +
                       "': " + Twine(Parts.size()) +
                       " lanes given, expected 1 or " + Twine(Ty.lanes()));
  } else {
    Parts.push_back(T);
  }
  unsigned Size = byteSize(Ty.elementKind());
  std::vector<uint8_t> Bytes(Ty.storeSize());
  for (unsigned L = 0; L < Ty.lanes(); ++L) {
    StringRef Part = Parts[Parts.size() == 1 ? 0 : L].trim();
    auto Bits = parseLiteral(Part, Ty.elementKind());
    if (!Bits) {
      if (Parts.size() == 1)
        return Bits.takeError(); // the message quotes the text already
      return specError("lane " + Twine(L) + ": " + toString(Bits.takeError()));
    }
    for (unsigned B = 0; B < Size; ++B)
      Bytes[L * Size + B] = static_cast<uint8_t>(*Bits >> (8 * B));
  }
  return Bytes;
}

/// Parses the N of `:im2col=LOWER/UPPER/CHANNELS/PIXELS` into \p S.
static llvm::Error parseIm2colSuffix(StringRef Spec, StringRef Text,
                                     BufferSpec &S) {
  auto Bad = [&](const Twine &Why) {
    return specError("bad buffer '" + Spec + "': im2col='" + Text + "' " + Why +
                     " (as in im2col=-1x-1/0x0/8/16: the pixel box's "
                     "lower and upper corners, channels per pixel, pixels "
                     "per column)");
  };
  llvm::SmallVector<StringRef, 4> Parts;
  Text.split(Parts, '/');
  if (Parts.size() != 4)
    return Bad("has " + Twine(Parts.size()) +
               " part(s), expected 4 separated by '/'");
  for (int Which = 0; Which < 2; ++Which) {
    // An empty corner has no entries (refused at launch with the rank).
    llvm::SmallVector<StringRef, 4> Dims;
    if (!Parts[Which].empty())
      Parts[Which].split(Dims, 'x');
    for (StringRef Dim : Dims) {
      int64_t N;
      StringRef Digits = Dim.starts_with("-") ? Dim.drop_front() : Dim;
      if (Digits.empty() || !llvm::all_of(Digits, llvm::isDigit) ||
          Dim.getAsInteger(10, N))
        return Bad("has corner entry '" + Dim +
                   "', not a signed 64-bit number");
      (Which ? S.Upper : S.Lower).push_back(N);
    }
  }
  for (int Which = 2; Which < 4; ++Which) {
    uint64_t N;
    if (Parts[Which].empty() || !llvm::all_of(Parts[Which], llvm::isDigit) ||
        Parts[Which].getAsInteger(10, N))
      return Bad(
          Twine(Which == 2 ? "channels per pixel" : "pixels per column") +
          " '" + Parts[Which] + "' is not a number below 2^64");
    (Which == 2 ? S.ChannelsPerPixel : S.PixelsPerColumn) = N;
  }
  S.HasIm2col = true;
  return llvm::Error::success();
}

/// Takes the `:shape=`, `:strides=`, `:box=` and `:im2col=` suffixes off the
/// end of \p Rest (the contents part of a buffer SPEC) into \p S. Only a suffix
/// that is exactly `:KEY=N[xN...]` counts, so the PATH of file= may still
/// hold colons.
static llvm::Error takeTensorSuffixes(StringRef Spec, StringRef &Rest,
                                      BufferSpec &S) {
  bool SeenShape = false, SeenStrides = false, SeenBox = false;
  for (;;) {
    size_t Colon = Rest.rfind(':');
    if (Colon == StringRef::npos)
      break;
    StringRef Suffix = Rest.drop_front(Colon + 1);
    auto [Key, Dims] = Suffix.split('=');
    if (Key == "im2col" && Suffix.contains('=')) {
      if (S.HasIm2col)
        return specError("bad buffer '" + Spec + "': 'im2col=' is given twice");
      if (llvm::Error E = parseIm2colSuffix(Spec, Dims, S))
        return E;
      Rest = Rest.take_front(Colon);
      continue;
    }
    std::vector<uint64_t> *To = Key == "shape"     ? &S.Shape
                                : Key == "strides" ? &S.Strides
                                : Key == "box"     ? &S.Box
                                                   : nullptr;
    bool *Seen = Key == "shape"     ? &SeenShape
                 : Key == "strides" ? &SeenStrides
                                    : &SeenBox;
    if (!To || !Suffix.contains('='))
      break;
    if (*Seen)
      return specError("bad buffer '" + Spec + "': '" + Key +
                       "=' is given twice");
    *Seen = true;
    llvm::SmallVector<StringRef, 8> Parts;
    Dims.split(Parts, 'x');
    for (StringRef Part : Parts) {
      uint64_t N;
      if (Part.empty() || !llvm::all_of(Part, llvm::isDigit) ||
          Part.getAsInteger(10, N))
        return specError("bad buffer '" + Spec + "': " + Key + "='" + Dims +
                         "' is not a list of numbers below 2^64 separated "
                         "by 'x' (as in 64x64)");
      To->push_back(N);
    }
    Rest = Rest.take_front(Colon);
  }
  if ((SeenStrides || SeenBox || S.HasIm2col) && !SeenShape)
    return specError("bad buffer '" + Spec + "': " +
                     (SeenStrides ? "strides="
                      : SeenBox   ? "box="
                                  : "im2col=") +
                     " needs a shape= (a tensor binding)");
  if (SeenBox && S.HasIm2col)
    return specError("bad buffer '" + Spec +
                     "': box= (a tiled tensor map) "
                     "and im2col= (an im2col one) exclude each other");
  return llvm::Error::success();
}

Expected<BufferSpec> kiln::parseBufferSpec(StringRef Spec) {
  size_t Open = Spec.find('[');
  size_t Close = Spec.find(']');
  if (Open == StringRef::npos || Close == StringRef::npos || Close < Open)
    return specError("bad buffer '" + Spec +
                     "': expected TYPE[COUNT]:zeros|fill=VALUE|iota|file=PATH");
  BufferSpec S;
  auto Ty = parseTypeText(Spec.take_front(Open));
  if (!Ty)
    return Ty.takeError();
  S.ElementType = *Ty;
  StringRef CountText = Spec.slice(Open + 1, Close).trim();
  if (CountText.empty() || !llvm::all_of(CountText, llvm::isDigit) ||
      CountText.getAsInteger(10, S.Count))
    return specError("bad buffer '" + Spec + "': element count '" + CountText +
                     "' is not a number below 2^64");
  StringRef Rest = Spec.drop_front(Close + 1);
  if (!Rest.consume_front(":"))
    return specError("bad buffer '" + Spec + "': expected ':' after ']'");
  // `file=PATH` is the contract's form, and PATH may end in something that
  // reads as a tensor suffix (`file=run:shape=4`): a PATH that names an
  // existing file (not a folder) is taken whole.
  llvm::sys::fs::file_status PathStatus;
  bool WholeFilePath =
      Rest.starts_with("file=") &&
      !llvm::sys::fs::status(Rest.drop_front(5), PathStatus) &&
      PathStatus.type() != llvm::sys::fs::file_type::directory_file;
  if (!WholeFilePath)
    if (llvm::Error E = takeTensorSuffixes(Spec, Rest, S))
      return E;
  if (Rest == "zeros") {
    S.Init = BufferSpec::InitKind::Zeros;
  } else if (Rest == "iota") {
    S.Init = BufferSpec::InitKind::Iota;
  } else if (Rest.consume_front("fill=")) {
    S.Init = BufferSpec::InitKind::Fill;
    if (auto V = parseValueText(Rest, S.ElementType); !V)
      return specError("bad buffer '" + Spec + "': " + toString(V.takeError()));
    S.Operand = Rest.str();
  } else if (Rest.consume_front("file=")) {
    S.Init = BufferSpec::InitKind::File;
    if (Rest.empty())
      return specError("bad buffer '" + Spec + "': empty file name");
    S.Operand = Rest.str();
  } else {
    return specError("bad buffer '" + Spec + "': unknown contents '" + Rest +
                     "' (expected zeros, fill=VALUE, iota or file=PATH)");
  }
  return S;
}

/// Stores the number \p N converted to \p Kind at \p Out.
static void storeConverted(uint64_t N, ScalarKind Kind, uint8_t *Out) {
  uint64_t Bits;
  switch (Kind) {
  case ScalarKind::Bool:
    Bits = N != 0;
    break;
  case ScalarKind::F32: {
    float F = static_cast<float>(N);
    uint32_t U;
    std::memcpy(&U, &F, 4);
    Bits = U;
    break;
  }
  case ScalarKind::F64: {
    double D = static_cast<double>(N);
    std::memcpy(&Bits, &D, 8);
    break;
  }
  case ScalarKind::F16:
  case ScalarKind::BF16: {
    llvm::APFloat F(Kind == ScalarKind::F16 ? llvm::APFloat::IEEEhalf()
                                            : llvm::APFloat::BFloat());
    F.convertFromAPInt(llvm::APInt(64, N), /*IsSigned=*/false,
                       llvm::APFloat::rmNearestTiesToEven);
    Bits = F.bitcastToAPInt().getZExtValue();
    break;
  }
  case ScalarKind::F4E2M1X2: // element N holds the values 2N and 2N + 1
    Bits = encodeMinifloat(double(2 * N), ScalarKind::F4E2M1) |
           unsigned(encodeMinifloat(double(2 * N + 1), ScalarKind::F4E2M1))
               << 4;
    break;
  default:
    if (isMinifloat(Kind)) // rounded and saturated as `cast` does
      Bits = encodeMinifloat(double(N), Kind);
    else
      Bits = N; // integers wrap: the low bytes are stored
    break;
  }
  for (unsigned B = 0; B < byteSize(Kind); ++B)
    Out[B] = static_cast<uint8_t>(Bits >> (8 * B));
}

namespace {
std::string errnoText(int Errno) {
  return std::error_code(Errno, std::generic_category()).message();
}

/// A file descriptor opened for reading, closed when it goes.
class ReadFile {
public:
  /// Opens \p Path ("-": standard input, not closed) without waiting for the
  /// writer of a FIFO (O_NONBLOCK, then back to blocking reads: a FIFO
  /// without a writer then reads as empty). The error is errno's text.
  static Expected<ReadFile> open(StringRef Path) {
    ReadFile F;
    if (Path == "-") {
      F.FD = STDIN_FILENO;
      F.Owned = false;
    } else {
      std::string P = Path.str();
      do
        F.FD = ::open(P.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      while (F.FD < 0 && errno == EINTR);
      if (F.FD < 0)
        return specError(errnoText(errno));
      int Flags = ::fcntl(F.FD, F_GETFL);
      if (Flags >= 0)
        ::fcntl(F.FD, F_SETFL, Flags & ~O_NONBLOCK);
    }
    struct stat St;
    if (::fstat(F.FD, &St) != 0)
      return specError(errnoText(errno));
    F.Regular = S_ISREG(St.st_mode);
    F.Size = F.Regular ? static_cast<uint64_t>(St.st_size) : 0;
    return F;
  }
  ReadFile(ReadFile &&O) noexcept
      : FD(std::exchange(O.FD, -1)), Owned(O.Owned), Regular(O.Regular),
        Size(O.Size) {}
  ~ReadFile() {
    if (FD >= 0 && Owned)
      ::close(FD);
  }

  bool regular() const { return Regular; }
  uint64_t size() const { return Size; } ///< a regular file's, else 0

  /// Reads up to \p N bytes into \p Out: fewer only at the end of the file.
  Expected<uint64_t> read(char *Out, uint64_t N) {
    uint64_t Got = 0;
    while (Got < N) {
      size_t Chunk = static_cast<size_t>(std::min<uint64_t>(N - Got, 1 << 30));
      ssize_t R = ::read(FD, Out + Got, Chunk);
      if (R < 0 && errno == EINTR)
        continue;
      if (R < 0)
        return specError(errnoText(errno));
      if (R == 0)
        break;
      Got += static_cast<uint64_t>(R);
    }
    return Got;
  }

private:
  ReadFile() = default;
  int FD = -1;
  bool Owned = true;
  bool Regular = false;
  uint64_t Size = 0;
};
} // namespace

Expected<std::string> kiln::readInputFile(StringRef Path, uint64_t MaxBytes) {
  auto TooLarge = [&] {
    return specError("larger than " + Twine(MaxBytes) +
                     " bytes (the limit of a .kiln input)");
  };
  Expected<ReadFile> F = ReadFile::open(Path);
  if (!F)
    return specError("cannot read file: " + toString(F.takeError()));
  if (F->regular() && F->size() > MaxBytes)
    return TooLarge();
  std::string Text;
  // A regular file is read in one go; anything else in steps, so that
  // memory follows what really came.
  uint64_t Step =
      std::max<uint64_t>(F->regular() ? F->size() + 1 : 0, 64 * 1024);
  for (;;) {
    uint64_t Want = std::min<uint64_t>(Step, MaxBytes + 1 - Text.size());
    size_t Old = Text.size();
    Text.resize(Old + Want);
    Expected<uint64_t> Got = F->read(Text.data() + Old, Want);
    if (!Got)
      return specError("cannot read file: " + toString(Got.takeError()));
    Text.resize(Old + *Got);
    if (Text.size() > MaxBytes)
      return TooLarge();
    if (*Got < Want)
      return Text;
    Step = std::min<uint64_t>(Step * 2, 16 << 20);
  }
}

Error kiln::checkOutputPath(StringRef PathRef) {
  if (PathRef == "-")
    return Error::success();
  std::string Path = PathRef.str();
  auto Refuse = [&](int Errno) {
    return specError("cannot open '" + Path + "': " + std::strerror(Errno));
  };
  struct stat St;
  if (::stat(Path.c_str(), &St) == 0) {
    if (S_ISDIR(St.st_mode))
      return Refuse(EISDIR);
    if (::faccessat(AT_FDCWD, Path.c_str(), W_OK, AT_EACCESS) != 0)
      return Refuse(errno);
    return Error::success();
  }
  if (errno != ENOENT)
    return Refuse(errno);
  // A new file: its folder must exist and take new names. (A link to a
  // missing file is judged by the link's folder; should its target's
  // folder refuse, writeOutputFile says so after the launch.)
  StringRef Parent = llvm::sys::path::parent_path(PathRef);
  std::string Folder = Parent.empty() ? std::string(".") : Parent.str();
  if (::stat(Folder.c_str(), &St) != 0)
    return Refuse(errno);
  if (!S_ISDIR(St.st_mode))
    return Refuse(ENOTDIR);
  if (::faccessat(AT_FDCWD, Folder.c_str(), W_OK | X_OK, AT_EACCESS) != 0)
    return Refuse(errno);
  return Error::success();
}

Error kiln::writeOutputFile(
    StringRef Path, bool Binary,
    llvm::function_ref<Error(llvm::raw_pwrite_stream &)> Write) {
  std::error_code EC;
  llvm::ToolOutputFile Out(Path, EC,
                           Binary ? llvm::sys::fs::OF_None
                                  : llvm::sys::fs::OF_TextWithCRLF);
  if (EC)
    return specError("cannot open '" + Path + "': " + EC.message());
  Error WriteErr = Write(Out.os());
  // Standard output is flushed, not closed (raw_fd_ostream does not own it).
  if (Path == "-")
    Out.os().flush();
  else
    Out.os().close();
  std::error_code Failed = Out.os().error();
  Out.os().clear_error();
  if (WriteErr)
    return WriteErr; // not kept: a regular file is removed
  if (Failed) {
    std::string What =
        Path == "-" ? std::string("standard output") : "'" + Path.str() + "'";
    return specError("cannot write " + What + ": " + Failed.message());
  }
  Out.keep();
  return Error::success();
}

Error kiln::flushOrError(llvm::raw_fd_ostream &OS, StringRef What) {
  OS.flush();
  if (!OS.has_error())
    return Error::success();
  std::error_code EC = OS.error();
  OS.clear_error();
  return specError("cannot write " + What + ": " + EC.message());
}

/// The last resort of installFatalErrorHandlers: "TOOL: error: REASON" on
/// standard error (with write(2): this may run while a stream is being
/// destroyed), the files of ToolOutputFiles not kept removed, exit status 1.
static void fatalError(void *Tool, const char *Reason, bool) {
  // One line: a selection failure goes on with a dump of the DAG.
  llvm::StringRef First = llvm::StringRef(Reason).split('\n').first;
  std::string Line = std::string(static_cast<const char *>(Tool)) +
                     ": error: " + First.str() + " (LLVM fatal error)\n";
  ssize_t Ignored = ::write(STDERR_FILENO, Line.data(), Line.size());
  (void)Ignored;
  llvm::sys::RunInterruptHandlers();
  std::_Exit(1);
}

static void badAlloc(void *Tool, const char *Reason, bool GenCrashDiag) {
  fatalError(Tool, (std::string("out of memory (") + Reason + ")").c_str(),
             GenCrashDiag);
}

void kiln::installFatalErrorHandlers(const char *Tool) {
  llvm::install_fatal_error_handler(fatalError, const_cast<char *>(Tool));
  llvm::install_bad_alloc_error_handler(badAlloc, const_cast<char *>(Tool));
}

void kiln::survivePipeReadersGoingAway() {
  std::signal(SIGPIPE, SIG_IGN);
  // Constructed before the handler is registered, the streams are
  // destroyed after it runs.
  llvm::outs();
  llvm::errs();
  std::atexit([] {
    llvm::outs().flush();
    llvm::outs().clear_error();
    llvm::errs().clear_error();
  });
}

Expected<HostBuffer> kiln::createBuffer(const BufferSpec &Spec) {
  Type Ty = Spec.ElementType;
  uint64_t Elem = Ty.storeSize();
  std::optional<ReadFile> File;
  uint64_t Want = 0;
  auto WrongSize = [&](const Twine &Has) {
    return specError("file '" + Spec.Operand + "' has " + Has +
                     " bytes, expected " + Twine(Spec.Count) + " elements of " +
                     Ty.str() + " (" + Twine(Want) + " bytes)");
  };
  if (Spec.Init == BufferSpec::InitKind::File) {
    if (Spec.Count > UINT64_MAX / Elem)
      return specError("file '" + Spec.Operand + "': " + Twine(Spec.Count) +
                       " elements of " + Ty.str() +
                       " are more than 2^64 bytes");
    Want = Spec.Count * Elem;
    // Checked before allocating, so a wrong COUNT costs nothing.
    Expected<ReadFile> F = ReadFile::open(Spec.Operand);
    if (!F)
      return specError("cannot read '" + Spec.Operand +
                       "': " + toString(F.takeError()));
    if (F->regular() && F->size() != Want)
      return WrongSize(Twine(F->size()));
    File.emplace(std::move(*F));
  }
  auto B = HostBuffer::create(Ty, Spec.Count);
  if (!B)
    return B.takeError();
  uint8_t *Out = B->as<uint8_t>();
  switch (Spec.Init) {
  case BufferSpec::InitKind::Zeros:
    break;
  case BufferSpec::InitKind::File: {
    // Exactly Want bytes, then one more would be too many: a pipe or a
    // device is never read further than that.
    Expected<uint64_t> Got = File->read(reinterpret_cast<char *>(Out), Want);
    if (!Got)
      return specError("cannot read '" + Spec.Operand +
                       "': " + toString(Got.takeError()));
    if (*Got < Want)
      return WrongSize(Twine(*Got));
    char Extra;
    Expected<uint64_t> More = File->read(&Extra, 1);
    if (!More)
      return specError("cannot read '" + Spec.Operand +
                       "': " + toString(More.takeError()));
    if (*More)
      return WrongSize("more than " + Twine(Want));
    break;
  }
  case BufferSpec::InitKind::Fill: {
    auto V = parseValueText(Spec.Operand, Ty);
    if (!V)
      return V.takeError();
    for (uint64_t I = 0; I < Spec.Count; ++I)
      std::memcpy(Out + I * Elem, V->data(), Elem);
    break;
  }
  case BufferSpec::InitKind::Iota: {
    unsigned Lanes = Ty.lanes();
    unsigned Size = byteSize(Ty.elementKind());
    for (uint64_t I = 0; I < Spec.Count * Lanes; ++I)
      storeConverted(I, Ty.elementKind(), Out + I * Size);
    break;
  }
  }
  return B;
}

/// The shortest text of a float that reads back to the same bits ("10",
/// "0.1", "0.33333334"); infinities and NaNs as printLiteral.
static std::string formatFloat(uint64_t Bits, ScalarKind Kind) {
  std::string S = shortestFloatText(Bits, Kind);
  if (S.empty())
    return printLiteral(Bits, Kind);
  // %g switches to an exponent as soon as the digits run out ("1e+01"):
  // write moderate magnitudes in fixed notation with as many digits.
  size_t E = S.find('e');
  if (E == std::string::npos)
    return S;
  int Exp = std::atoi(S.c_str() + E + 1);
  if (Exp < -5 || Exp >= 17)
    return S;
  int Digits = 0;
  for (size_t I = 0; I != E; ++I)
    Digits += S[I] >= '0' && S[I] <= '9';
  double V = std::strtod(S.c_str(), nullptr);
  char Fixed[400];
  std::snprintf(Fixed, sizeof(Fixed), "%.*f", std::max(0, Digits - 1 - Exp), V);
  llvm::Expected<uint64_t> Back = parseLiteral(Fixed, Kind);
  if (Back && *Back == Bits)
    return Fixed;
  if (!Back)
    llvm::consumeError(Back.takeError());
  return S;
}

std::string kiln::formatElement(const void *Element, Type Ty) {
  const uint8_t *P = static_cast<const uint8_t *>(Element);
  unsigned Size = byteSize(Ty.elementKind());
  std::string S;
  for (unsigned L = 0; L < Ty.lanes(); ++L) {
    uint64_t Bits = 0;
    for (unsigned B = 0; B < Size; ++B)
      Bits |= uint64_t(P[L * Size + B]) << (8 * B);
    if (L)
      S += ' ';
    // A bool byte other than 0 or 1 is still shown as what it means.
    if (Ty.elementKind() == ScalarKind::Bool)
      Bits = Bits != 0;
    ScalarKind K = Ty.elementKind();
    if (K == ScalarKind::F4E2M1X2) // its two values, element 0 first
      S += formatFloat(Bits & 0xF, ScalarKind::F4E2M1) + "|" +
           formatFloat(Bits >> 4, ScalarKind::F4E2M1);
    else
      S += isFloat(K) || isMinifloat(K) ? formatFloat(Bits, K)
                                        : printLiteral(Bits, K);
  }
  return S;
}

Expected<std::array<uint32_t, 3>> kiln::parseCubeCount(StringRef Text) {
  llvm::SmallVector<StringRef, 4> Parts;
  Text.split(Parts, ',');
  if (Parts.size() > 3)
    return specError("bad cube count '" + Text +
                     "': expected X[,Y[,Z]], at most three numbers");
  std::array<uint32_t, 3> Count = {1, 1, 1};
  for (size_t I = 0; I < Parts.size(); ++I) {
    StringRef P = Parts[I].trim();
    uint64_t V;
    if (P.empty() || !llvm::all_of(P, llvm::isDigit) || P.getAsInteger(10, V) ||
        V > UINT32_MAX)
      return specError("bad cube count '" + Text + "': '" + P +
                       "' is not a number in 0..4294967295");
    Count[I] = static_cast<uint32_t>(V);
  }
  return Count;
}

std::vector<ParamMetadata> kiln::paramsOf(const IRKernel &K) {
  std::vector<ParamMetadata> Params;
  for (ValueId Id : K.Params) {
    const ValueInfo &V = K.value(Id);
    ParamMetadata P;
    P.Name = V.Name;
    P.IsBuffer = V.Kind == ValueKind::Buffer;
    P.Ty = V.Ty;
    P.Access = V.Access;
    P.IsTensorMap = V.IsTensorMap;
    P.IsIm2col = V.IsIm2col;
    Params.push_back(std::move(P));
  }
  return Params;
}

Expected<std::pair<std::string, std::string>>
kiln::splitNameValue(StringRef Text, StringRef Option) {
  auto [Name, Rest] = Text.split('=');
  Name = Name.trim();
  Name.consume_front("%");
  if (Name.empty() || Rest.data() == nullptr || !Text.contains('='))
    return specError("--" + Option + " '" + Text +
                     "': expected NAME=" + (Option == "arg" ? "SPEC" : "PATH"));
  return std::make_pair(Name.str(), Rest.str());
}

Expected<LaunchInputs>
kiln::bindArguments(llvm::ArrayRef<ParamMetadata> Params,
                    llvm::ArrayRef<std::string> NameSpecs) {
  std::vector<std::optional<std::string>> Specs(Params.size());
  for (const std::string &Text : NameSpecs) {
    auto NV = splitNameValue(Text, "arg");
    if (!NV)
      return NV.takeError();
    auto It = llvm::find_if(
        Params, [&](const ParamMetadata &P) { return P.Name == NV->first; });
    if (It == Params.end()) {
      std::string Known;
      for (const ParamMetadata &P : Params)
        Known += (Known.empty() ? "%" : ", %") + P.Name;
      return specError(
          "--arg " + NV->first + ": the kernel has no parameter %" + NV->first +
          " (parameters: " + (Known.empty() ? "none" : Known) + ")");
    }
    size_t I = It - Params.begin();
    if (Specs[I])
      return specError("--arg " + NV->first + ": parameter %" + NV->first +
                       " is given more than once");
    Specs[I] = NV->second;
  }
  LaunchInputs In;
  In.Buffers.resize(Params.size());
  for (size_t I = 0; I < Params.size(); ++I) {
    const ParamMetadata &P = Params[I];
    if (!Specs[I])
      return specError("missing --arg for parameter %" + P.Name + " (" +
                       (P.IsBuffer ? "a buffer of " + P.Ty.str()
                                   : "a value of type " + P.Ty.str()) +
                       ")");
    StringRef Spec = *Specs[I];
    auto Bad = [&](const Twine &Why) {
      return specError("--arg " + P.Name + ": " + Why);
    };
    if (P.IsBuffer) {
      if (!isBufferSpecText(Spec))
        return Bad("%" + P.Name + " is a buffer of " + P.Ty.str() +
                   ": expected " + P.Ty.str() +
                   "[COUNT]:zeros|fill=VALUE|iota|file=PATH, got '" + Spec +
                   "'");
      auto BS = parseBufferSpec(Spec);
      if (!BS)
        return Bad(toString(BS.takeError()));
      if (BS->ElementType != P.Ty)
        return Bad("%" + P.Name + " is a buffer of " + P.Ty.str() +
                   ", the buffer given holds " + BS->ElementType.str());
      auto B = createBuffer(*BS);
      if (!B)
        return Bad(toString(B.takeError()));
      In.Buffers[I] = std::move(*B);
      ArgBinding Binding = ArgBinding::buffer(In.Buffers[I]);
      if (!BS->Box.empty() && !P.IsTensorMap)
        return specError("argument '" + P.Name +
                         "': box= binds a tensor map, but %" + P.Name +
                         " is a buffer parameter");
      if (BS->HasIm2col && !P.IsIm2col)
        return specError("argument '" + P.Name +
                         "': im2col= binds an im2col tensor map, but %" +
                         P.Name + " is " +
                         (P.IsTensorMap ? "a tiled tensor_map parameter"
                                        : "a buffer parameter"));
      if (P.IsIm2col && !BS->HasIm2col)
        return specError("argument '" + P.Name + "': %" + P.Name +
                         " is an im2col tensor_map parameter: give its shape "
                         "and im2col parameters "
                         "(TYPE[COUNT]:INIT:shape=NxHxWxC:im2col="
                         "LOWER/UPPER/CHANNELS/PIXELS)");
      if (P.IsTensorMap && !P.IsIm2col && BS->Box.empty())
        return specError("argument '" + P.Name + "': %" + P.Name +
                         " is a tensor_map parameter: give its shape and "
                         "box (TYPE[COUNT]:INIT:shape=AxB:box=AxB)");
      if (!BS->Shape.empty())
        Binding = Binding.withShape(BS->Shape, BS->Strides);
      if (!BS->Box.empty())
        Binding = Binding.withBox(BS->Box);
      if (BS->HasIm2col)
        Binding = Binding.withIm2col(BS->Lower, BS->Upper, BS->ChannelsPerPixel,
                                     BS->PixelsPerColumn);
      In.Bindings.push_back(Binding);
    } else {
      if (isBufferSpecText(Spec))
        return Bad("%" + P.Name + " is a value of type " + P.Ty.str() +
                   ", not a buffer");
      auto V = parseValueText(Spec, P.Ty);
      if (!V)
        return Bad(toString(V.takeError()));
      In.Bindings.push_back(ArgBinding::value(P.Ty, V->data(), V->size()));
    }
  }
  return In;
}
