//===- CrossArchTest.cpp - Code and store namespaces of another architecture -===//
//
// Objects for x86-64 and AArch64 from any host, the errors of a target
// request, and a store bundle made on another architecture imported here
// without being taken for this machine's (docs/Portability.md).
//
//===----------------------------------------------------------------------===//

#include "Support/Kernels.h"
#include "Support/TempDir.h"

#include "kiln/CPU/CodeGen.h"
#include "kiln/CPU/CpuBackend.h"
#include "kiln/CPU/HostInfo.h"
#include "kiln/CPU/Lowering.h"
#include "kiln/Compile/KernelLoader.h"
#include "kiln/IR/Hash.h"
#include "kiln/Store/Bundle.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <gtest/gtest.h>

#include <string>

using namespace kiln;
using kiln::test::TempDir;

namespace {

const char *Source = R"(
kernel @saxpy cube_dim(64) (%x: buffer<f32, read>, %y: buffer<f32, read_write>,
                            %a: f32, %n: u32) {
  %i = absolute_pos : u32
  %in = lt %i, %n : bool
  if %in {
    %xv = load %x[%i] : f32
    %yv = load %y[%i] : f32
    %r = fma %a, %xv, %yv : f32
    store %y[%i], %r
  }
}
)";

/// The architecture that is not the host's, as a triple and a CPU of it.
struct Foreign {
  std::string Triple, CPU;
};
Foreign foreignArch() {
  if (llvm::Triple(hostInfo().Triple).isAArch64())
    return {"x86_64-unknown-linux-gnu", "x86-64-v3"};
  return {"aarch64-unknown-linux-gnu", "neoverse-v1"};
}

/// Skips the test in a build that generates no code for the other
/// architecture (KILN_TARGETS=host).
#define SKIP_WITHOUT_FOREIGN_TARGET()                                          \
  if (!generatesCodeFor(foreignArch().Triple))                                 \
  GTEST_SKIP() << "this build generates no code for " << foreignArch().Triple

/// The ELF machine (e_machine) of \p Obj, 0 when it is not ELF.
unsigned elfMachine(llvm::ArrayRef<char> Obj) {
  if (Obj.size() < 20 || Obj[0] != 0x7f || Obj[1] != 'E')
    return 0;
  return static_cast<unsigned char>(Obj[18]) |
         static_cast<unsigned char>(Obj[19]) << 8;
}

std::string errorOf(const CodeGenOptions &O) {
  llvm::Error E = checkTargetOptions(O);
  return E ? llvm::toString(std::move(E)) : std::string();
}

TEST(CrossArch, ObjectsForEitherArchitectureFromAnyHost) {
  SKIP_WITHOUT_FOREIGN_TARGET();
  Module M = test::parseOk(Source, "k.kiln");
  const IRKernel &K = *M.findKernel("saxpy");
  struct Case {
    const char *Triple, *CPU;
    unsigned Machine; // EM_X86_64, EM_AARCH64
  } Cases[] = {{"aarch64-linux-gnu", "neoverse-v1", 183},
               {"aarch64-linux-gnu", "", 183},
               {"x86_64-linux-gnu", "x86-64-v2", 62},
               {"x86_64-linux-gnu", "skylake-avx512", 62}};
  for (const Case &C : Cases) {
    SCOPED_TRACE(std::string(C.Triple) + " " + C.CPU);
    CodeGenOptions O;
    O.Triple = C.Triple;
    O.CPU = C.CPU;
    auto TM = createTargetMachine(O);
    ASSERT_TRUE(!!TM) << llvm::toString(TM.takeError());
    llvm::LLVMContext Ctx;
    auto Lowered = lowerKernel(K, CpuVariant(), DeviceLimits(), Ctx);
    ASSERT_TRUE(!!Lowered) << llvm::toString(Lowered.takeError());
    llvm::Module &LM = *Lowered->Module;
    ASSERT_FALSE(!!optimizeModule(LM, **TM, 3));
    EXPECT_EQ(llvm::Triple(LM.getTargetTriple()).getArch(),
              llvm::Triple(C.Triple).getArch());
    auto Obj = emitObject(LM, **TM);
    ASSERT_TRUE(!!Obj) << llvm::toString(Obj.takeError());
    EXPECT_EQ(elfMachine(*Obj), C.Machine);
  }
}

TEST(CrossArch, SVEWithTheCPUsVectorLengthWhenCrossCompiling) {
  if (llvm::Triple(hostInfo().Triple).isAArch64())
    GTEST_SKIP() << "on AArch64 the machine's own vector length is used";
  SKIP_WITHOUT_FOREIGN_TARGET();
  Module M = test::parseOk(Source, "k.kiln");
  CodeGenOptions O;
  O.Triple = "aarch64-linux-gnu";
  O.CPU = "neoverse-v1"; // SVE, 256-bit vectors
  auto TM = createTargetMachine(O);
  ASSERT_TRUE(!!TM) << llvm::toString(TM.takeError());
  llvm::LLVMContext Ctx;
  auto Lowered =
      lowerKernel(*M.findKernel("saxpy"), CpuVariant(), DeviceLimits(), Ctx);
  ASSERT_TRUE(!!Lowered) << llvm::toString(Lowered.takeError());
  prepareModule(*Lowered->Module, **TM);
  unsigned Annotated = 0;
  for (const llvm::Function &F : *Lowered->Module)
    if (!F.isDeclaration()) {
      llvm::Attribute A = F.getFnAttribute(llvm::Attribute::VScaleRange);
      ASSERT_TRUE(A.isValid()) << F.getName().str();
      EXPECT_EQ(A.getVScaleRangeMin(), 2u);
      ++Annotated;
    }
  EXPECT_GT(Annotated, 0u);
  // A CPU without SVE keeps NEON vectors: no vector length is assumed.
  O.CPU = "cortex-a72";
  auto NeonTM = createTargetMachine(O);
  ASSERT_TRUE(!!NeonTM) << llvm::toString(NeonTM.takeError());
  llvm::LLVMContext Ctx2;
  auto L2 =
      lowerKernel(*M.findKernel("saxpy"), CpuVariant(), DeviceLimits(), Ctx2);
  ASSERT_TRUE(!!L2);
  prepareModule(*L2->Module, **NeonTM);
  for (const llvm::Function &F : *L2->Module)
    EXPECT_FALSE(F.hasFnAttribute(llvm::Attribute::VScaleRange));
}

TEST(CrossArch, BadTargetRequestsAreClearErrors) {
  SKIP_WITHOUT_FOREIGN_TARGET();
  CodeGenOptions O;
  O.Triple = "nonsense-triple";
  EXPECT_NE(errorOf(O).find("unknown target triple 'nonsense-triple'"),
            std::string::npos)
      << errorOf(O);
  O.Triple = "riscv64-linux-gnu";
  EXPECT_NE(errorOf(O).find("Kiln cannot generate code for "
                            "'riscv64-unknown-linux-gnu'"),
            std::string::npos)
      << errorOf(O);
  O.Triple = "aarch64-linux-gnu";
  O.CPU = "znver3";
  EXPECT_NE(errorOf(O).find("unknown CPU 'znver3' for aarch64"),
            std::string::npos)
      << errorOf(O);
  O.CPU = "";
  O.Features = "+avx2";
  EXPECT_NE(errorOf(O).find("unknown target feature 'avx2' for aarch64"),
            std::string::npos)
      << errorOf(O);
  O.Features = "-neon";
  EXPECT_NE(errorOf(O).find("turn off neon, which Kiln's code for "
                            "aarch64-unknown-linux-gnu needs"),
            std::string::npos)
      << errorOf(O);
  O.Features = "+sve";
  EXPECT_EQ(errorOf(O), "");

  // Another architecture's code is fine to emit, never to run here.
  CodeGenOptions F;
  F.Triple = foreignArch().Triple;
  EXPECT_EQ(errorOf(F), "");
  llvm::Error E = checkRunsOnHost(F);
  ASSERT_TRUE(!!E);
  std::string Msg = llvm::toString(std::move(E));
  EXPECT_NE(Msg.find("cannot run on this " + hostInfo().Triple + " host"),
            std::string::npos)
      << Msg;
}

TEST(CrossArch, AnArchitectureLeftOutOfTheBuildIsAClearError) {
  EXPECT_TRUE(generatesCodeFor(hostInfo().Triple));
  if (generatesCodeFor(foreignArch().Triple))
    GTEST_SKIP() << "this build generates code for both architectures";
  CodeGenOptions O;
  O.Triple = foreignArch().Triple;
  std::string Msg = errorOf(O);
  EXPECT_NE(Msg.find("this Kiln was built without code generation for '" +
                     foreignArch().Triple + "' (KILN_TARGETS leaves out "),
            std::string::npos)
      << Msg;
  auto TM = createTargetMachine(O);
  ASSERT_FALSE(!!TM);
  EXPECT_EQ(llvm::toString(TM.takeError()), Msg);
}

TEST(CrossArch, ABundleFromAnotherArchitectureIsNotTakenForThisOnes) {
  SKIP_WITHOUT_FOREIGN_TARGET();
  Module M = test::parseOk(Source, "k.kiln");
  const IRKernel &K = *M.findKernel("saxpy");
  CpuTarget::Id Id{KernelId(kernelIdFromIR(K), hashKernel(K)), CpuVariant()};
  Foreign Other = foreignArch();

  // The other machine: its code, under the namespace it names itself by
  // (its triple, CPU and features), in its own store, exported.
  HostInfo OtherHost;
  OtherHost.Triple = Other.Triple;
  OtherHost.CPU = Other.CPU;
  OtherHost.Features = llvm::Triple(Other.Triple).isAArch64()
                           ? std::vector<std::string>{"+neon", "+sve"}
                           : std::vector<std::string>{"+avx2", "+fma"};
  OtherHost.LLVMVersion = hostInfo().LLVMVersion;
  std::string OtherFingerprint =
      cpuStoreFingerprint({}, DeviceLimits(), OtherHost);
  CodeGenOptions OtherCode;
  OtherCode.Triple = Other.Triple;
  OtherCode.CPU = Other.CPU;
  CompilationRecording Off;
  CompilationLogger Log;
  auto A = CpuCompiler(OtherCode).lower({K, "k.kiln"}, Id, Off, Log);
  ASSERT_TRUE(!!A) << llvm::toString(A.takeError());
  TempDir There, Here;
  StoreConfig C;
  {
    ArtifactStore<CpuArtifact> S(
        FileStore::openAt(There.path(), "cpu", OtherFingerprint, C), nullptr,
        sourceBuildIdHash());
    ASSERT_TRUE(S.storeVariant(Id, *A));
  }
  std::string Bundle = There.path() + "/other.kilnbundle";
  auto Exported = exportBundle(There.path(), Bundle);
  ASSERT_TRUE(!!Exported) << llvm::toString(Exported.takeError());
  EXPECT_EQ(Exported->Entries, 1u);

  // This machine imports it: the entry keeps its own namespace...
  auto Imported = importBundle(Here.path(), Bundle);
  ASSERT_TRUE(!!Imported) << llvm::toString(Imported.takeError());
  EXPECT_EQ(Imported->Entries, 1u);
  EXPECT_EQ(Imported->Refused, 0u);
  EXPECT_NE(fingerprintHex(OtherFingerprint),
            fingerprintHex(cpuStoreFingerprint({})));
  {
    ArtifactStore<CpuArtifact> S(
        FileStore::openAt(Here.path(), "cpu", OtherFingerprint, C), nullptr,
        sourceBuildIdHash());
    std::optional<CpuArtifact> Kept = S.takeVariant(Id);
    ASSERT_TRUE(Kept.has_value());
    EXPECT_EQ(Kept->Object, A->Object);
  }
  // ... and this machine's loader never sees it: it compiles its own code,
  // which runs here.
  auto Linker = JITLinker::create();
  ASSERT_TRUE(!!Linker) << llvm::toString(Linker.takeError());
  CpuTarget T(CpuCompiler(), **Linker,
              ArtifactStore<CpuArtifact>(
                  FileStore::openAt(Here.path(), "cpu",
                                    cpuStoreFingerprint({}), C),
                  nullptr, sourceBuildIdHash()));
  EXPECT_EQ(T.stored(Id), std::nullopt);
  KernelLoader<CpuTarget> L(T);
  CpuSource Src{K, "k.kiln"};
  auto Loaded = L.get(Id, Src);
  ASSERT_TRUE(!!Loaded) << llvm::toString(Loaded.takeError());
  EXPECT_EQ(L.statistics().Compiled, 1u);
  EXPECT_EQ(L.statistics().StoreHits, 0u);
}

} // namespace
