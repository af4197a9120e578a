//===- BuildId.cpp - A hash of the build that contains Kiln --------------===//

#include "kiln/Store/KernelCacheKey.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#ifdef KILN_HAVE_SOURCE_ID
#include "KilnSourceId.inc"
#endif

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "unknown"
#endif

namespace kiln {

namespace {
struct Search {
  uintptr_t Base = 0; ///< load address of the module holding Kiln
  std::string Id;
};

/// The NT_GNU_BUILD_ID descriptor in the PT_NOTE segments of one module.
int visitModule(dl_phdr_info *Info, size_t, void *Data) {
  auto *S = static_cast<Search *>(Data);
  // dladdr's dli_fbase is the address of the first mapped segment; compare
  // with the module's PT_LOAD at offset 0.
  bool Ours = false;
  for (int I = 0; I != Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) &P = Info->dlpi_phdr[I];
    if (P.p_type == PT_LOAD && P.p_offset == 0 &&
        Info->dlpi_addr + P.p_vaddr == S->Base)
      Ours = true;
  }
  if (!Ours)
    return 0;
  for (int I = 0; I != Info->dlpi_phnum; ++I) {
    const ElfW(Phdr) &P = Info->dlpi_phdr[I];
    if (P.p_type != PT_NOTE)
      continue;
    const char *Cur =
        reinterpret_cast<const char *>(Info->dlpi_addr + P.p_vaddr);
    const char *End = Cur + P.p_memsz;
    while (Cur + sizeof(ElfW(Nhdr)) <= End) {
      ElfW(Nhdr) N;
      std::memcpy(&N, Cur, sizeof(N));
      const char *Name = Cur + sizeof(N);
      const char *Desc = Name + ((N.n_namesz + 3) & ~3u);
      const char *Next = Desc + ((N.n_descsz + 3) & ~3u);
      if (Next > End)
        break;
      if (N.n_type == NT_GNU_BUILD_ID && N.n_namesz == 4 &&
          std::memcmp(Name, "GNU", 4) == 0) {
        S->Id.assign(Desc, N.n_descsz);
        return 1;
      }
      Cur = Next;
    }
  }
  return 1;
}

std::string rawBuildId() {
  Dl_info Info;
  if (!dladdr(reinterpret_cast<void *>(&buildIdHash), &Info) || !Info.dli_fbase)
    return std::string();
  Search S;
  S.Base = reinterpret_cast<uintptr_t>(Info.dli_fbase);
  dl_iterate_phdr(visitModule, &S);
  return S.Id;
}
} // namespace

std::string buildIdText() {
  static const std::string Text = [] {
    std::string Hex;
    llvm::raw_string_ostream OS(Hex);
    for (unsigned char C : rawBuildId())
      OS << llvm::format_hex_no_prefix(C, 2);
    return Hex;
  }();
  return Text;
}

uint64_t buildIdHash() {
  static const uint64_t Hash = [] {
    std::string Id = rawBuildId();
    if (Id.empty())
      Id = std::string("kiln " KILN_VERSION_STRING " llvm ") +
           LLVM_VERSION_STRING;
    return llvm::xxh3_64bits(Id);
  }();
  return Hash;
}

uint64_t sourceBuildIdHash() {
  static const uint64_t Hash = [] {
#ifdef KILN_SOURCE_ID
    return llvm::xxh3_64bits(std::string("kiln-sources " KILN_SOURCE_ID
                                         " llvm ") +
                             LLVM_VERSION_STRING);
#else
    return buildIdHash();
#endif
  }();
  return Hash;
}

std::string KernelCacheKey::hex() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format_hex_no_prefix(Id, 16)
     << llvm::format_hex_no_prefix(BuildId, 16);
  return S;
}

} // namespace kiln
