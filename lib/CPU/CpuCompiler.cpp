//===- CpuCompiler.cpp - The CPU ArtifactCompiler and its artifact codec --===//

#include "kiln/CPU/CpuBackend.h"
#include "kiln/CPU/HostInfo.h"
#include "kiln/CPU/Lowering.h"
#include "kiln/CPU/Pipeline.h"
#include "kiln/IR/Hash.h"
#include "kiln/IR/Printer.h"
#include "kiln/IR/Verifier.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <cstring>
#include <optional>

using namespace kiln;
using namespace llvm;
using llvm::support::endian::read32le;
using llvm::support::endian::read64le;

static constexpr char CodecMagic[4] = {'K', 'C', 'P', 'U'};
static constexpr uint32_t CodecVersion = 1;

//===----------------------------------------------------------------------===//
// ArtifactCodec<CpuArtifact>
//===----------------------------------------------------------------------===//

static void put32(std::vector<uint8_t> &Out, uint32_t V) {
  uint8_t B[4];
  support::endian::write32le(B, V);
  Out.insert(Out.end(), B, B + 4);
}

static void put64(std::vector<uint8_t> &Out, uint64_t V) {
  uint8_t B[8];
  support::endian::write64le(B, V);
  Out.insert(Out.end(), B, B + 8);
}

std::vector<uint8_t>
ArtifactCodec<CpuArtifact>::encode(const CpuArtifact &A) {
  std::vector<uint8_t> Meta = A.Meta.serialize();
  std::vector<uint8_t> Out;
  Out.reserve(4 + 4 + 8 + 4 + A.Features.size() + 4 + Meta.size() + 8 +
              A.Object.size());
  // The magic as a little-endian word: inserting the char array here trips a
  // false -Wstringop-overflow in GCC 12's vector::insert.
  put32(Out, support::endian::read32le(CodecMagic));
  put32(Out, CodecVersion);
  put64(Out, A.IRHash);
  put32(Out, static_cast<uint32_t>(A.Features.size()));
  Out.insert(Out.end(), A.Features.begin(), A.Features.end());
  put32(Out, static_cast<uint32_t>(Meta.size()));
  Out.insert(Out.end(), Meta.begin(), Meta.end());
  put64(Out, A.Object.size());
  Out.insert(Out.end(), A.Object.begin(), A.Object.end());
  return Out;
}

namespace {
/// Reads little-endian fields off the front of a byte range, checking each
/// length against what is left.
class Reader {
public:
  explicit Reader(ArrayRef<uint8_t> Bytes) : Rest(Bytes) {}

  bool take(size_t N, ArrayRef<uint8_t> &Out) {
    if (N > Rest.size())
      return false;
    Out = Rest.take_front(N);
    Rest = Rest.drop_front(N);
    return true;
  }
  bool u32(uint32_t &V) {
    ArrayRef<uint8_t> B;
    if (!take(4, B))
      return false;
    V = read32le(B.data());
    return true;
  }
  bool u64(uint64_t &V) {
    ArrayRef<uint8_t> B;
    if (!take(8, B))
      return false;
    V = read64le(B.data());
    return true;
  }
  size_t left() const { return Rest.size(); }

private:
  ArrayRef<uint8_t> Rest;
};

Error codecError(const Twine &Why) {
  return createStringError(inconvertibleErrorCode(),
                           "bad CPU artifact: " + Why);
}
} // namespace

Expected<CpuArtifact>
ArtifactCodec<CpuArtifact>::decode(ArrayRef<uint8_t> Bytes) {
  Reader R(Bytes);
  ArrayRef<uint8_t> Magic;
  if (!R.take(4, Magic) || std::memcmp(Magic.data(), CodecMagic, 4) != 0)
    return codecError("bad magic");
  uint32_t Version = 0;
  if (!R.u32(Version))
    return codecError("truncated header");
  if (Version != CodecVersion)
    return codecError("version " + Twine(Version) + ", expected " +
                      Twine(CodecVersion));
  CpuArtifact A;
  uint32_t FeaturesLen = 0, MetaLen = 0;
  uint64_t ObjectLen = 0;
  ArrayRef<uint8_t> Features, Meta, Object;
  if (!R.u64(A.IRHash) || !R.u32(FeaturesLen) || !R.take(FeaturesLen, Features))
    return codecError("truncated feature string");
  if (!R.u32(MetaLen) || !R.take(MetaLen, Meta))
    return codecError("truncated metadata");
  if (!R.u64(ObjectLen) || ObjectLen > R.left() ||
      !R.take(static_cast<size_t>(ObjectLen), Object))
    return codecError("truncated object");
  if (R.left() != 0)
    return codecError(Twine(R.left()) + " trailing bytes");
  if (Object.empty())
    return codecError("empty object");
  Expected<CubeMetadata> M = CubeMetadata::deserialize(Meta);
  if (!M)
    return codecError("metadata: " + toString(M.takeError()));
  A.Features.assign(Features.begin(), Features.end());
  A.Meta = std::move(*M);
  A.Object.assign(Object.begin(), Object.end());
  return A;
}

//===----------------------------------------------------------------------===//
// CpuCompiler
//===----------------------------------------------------------------------===//

/// The file of a dump after step \p S: "after-07-emission.ll".
static std::string stepFileName(const PipelineStep &S) {
  StringRef Ext = S.Output == StepOutput::KernelIR   ? "kiln"
                  : S.Output == StepOutput::LLVMIR   ? "ll"
                  : S.Output == StepOutput::Assembly ? "s"
                                                     : "txt";
  unsigned N = static_cast<unsigned>(S.Id) + 1;
  return (Twine("after-") + (N < 10 ? "0" : "") + Twine(N) + "-" + S.Name +
          "." + Ext)
      .str();
}

static std::string moduleText(const llvm::Module &M) {
  std::string S;
  raw_string_ostream OS(S);
  M.print(OS, nullptr);
  return S;
}

Expected<CpuArtifact> CpuCompiler::lower(const CpuSource &Src,
                                         const ArtifactId<CpuVariant> &Id,
                                         CompilationRecording &Rec,
                                         CompilationLogger &Log) const {
  {
    auto P = Log.time(cpu_phase::Verify);
    if (Error E = verifyKernel(Src.K, Limits, Src.FileName))
      return E; // implicitly moved (C++20)
  }
  if (Rec.enabled())
    Rec.record(RecordingKind::KernelIR, printKernel(Src.K));
  // KILN_DUMP_AFTER: the IR after the steps it names, in the dump too.
  std::optional<StepDumps> Dumps;
  if (Rec.enabled() && !CompilationRecording::defaultDumpAfter().empty()) {
    Expected<StepDumps> D = StepDumps::create(
        CompilationRecording::defaultDumpAfter(), "KILN_DUMP_AFTER",
        [&Rec](const PipelineStep &S, StringRef Text) {
          Rec.recordFile(stepFileName(S), Text);
        });
    if (!D)
      return D.takeError();
    Dumps = std::move(*D);
  }
  const StepDumps *StepDump = Dumps ? &*Dumps : nullptr;

  LLVMContext Ctx;
  Expected<LoweredModule> Lowered = [&] {
    auto P = Log.time(cpu_phase::LowerIR);
    return lowerKernel(Src.K, Id.Var, Limits, Ctx, StepDump);
  }();
  if (!Lowered)
    return Lowered.takeError();
  llvm::Module &M = *Lowered->Module;
  if (Rec.enabled())
    Rec.record(RecordingKind::LLVMIR, moduleText(M));

  // One TargetMachine per compilation: they are not thread-safe
  // (docs/Design.md §10.4).
  Expected<std::unique_ptr<TargetMachine>> TM =
      createTargetMachine(CodeGen, StepDump);
  if (!TM)
    return TM.takeError();
  {
    auto P = Log.time(cpu_phase::Optimize);
    if (Error E = optimizeModule(M, **TM, CodeGen.OptLevel, StepDump))
      return E; // implicitly moved (C++20)
  }
  // Code generation runs IR passes on the module: the assembly, when asked
  // for, comes from a copy so that the object is the same with or without
  // KILN_DUMP.
  std::unique_ptr<llvm::Module> ForAsm;
  if (Rec.enabled()) {
    Rec.record(RecordingKind::OptimizedLLVMIR, moduleText(M));
    ForAsm = CloneModule(M);
  }
  Expected<SmallVector<char, 0>> Object = [&] {
    auto P = Log.time(cpu_phase::Codegen);
    return emitObject(M, **TM, StepDump);
  }();
  if (!Object)
    return Object.takeError();
  if (ForAsm) {
    auto P = Log.time(cpu_phase::Assembly);
    Expected<std::string> Asm = emitAssembly(*ForAsm, **TM);
    if (!Asm)
      return Asm.takeError();
    Rec.record(RecordingKind::Assembly, std::move(*Asm));
  }

  CpuArtifact A;
  A.Object.assign(Object->begin(), Object->end());
  A.Meta = std::move(Lowered->Metadata);
  A.IRHash = hashKernel(Src.K);
  A.Features = (*TM)->getTargetFeatureString().str();
  return A;
}

std::string kiln::cpuStoreFingerprint(const CodeGenOptions &CodeGen,
                                      const DeviceLimits &Limits) {
  return cpuStoreFingerprint(CodeGen, Limits, hostInfo());
}

std::string kiln::cpuStoreFingerprint(const CodeGenOptions &CodeGen,
                                      const DeviceLimits &Limits,
                                      const HostInfo &H) {
  std::string S = H.Triple + " " + H.CPU + " " + H.featureString() + " LLVM " +
                  H.LLVMVersion;
  if (!H.Details.empty())
    S += " " + H.Details;
  if (CodeGen.OptLevel != 3)
    S += " -O" + std::to_string(CodeGen.OptLevel);
  if (!CodeGen.Triple.empty())
    S += " -mtriple=" + CodeGen.Triple;
  if (!CodeGen.CPU.empty())
    S += " -mcpu=" + CodeGen.CPU;
  if (!CodeGen.Features.empty())
    S += " -mattr=" + CodeGen.Features;
  if (Limits.PlaneDim != DeviceLimits().PlaneDim)
    S += " plane_dim=" + std::to_string(Limits.PlaneDim);
  return S;
}
