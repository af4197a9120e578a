//===- Vandal.cpp - A child process that prunes and damages a store -------===//

#include "Vandal.h"

#include "kiln/Store/StoreScan.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> regularFilesUnder(const fs::path &Root) {
  std::vector<fs::path> Files;
  std::error_code EC;
  fs::recursive_directory_iterator It(
      Root, fs::directory_options::skip_permission_denied, EC);
  for (; !EC && It != fs::recursive_directory_iterator(); It.increment(EC)) {
    std::error_code TypeEC;
    if (It->is_regular_file(TypeEC))
      Files.push_back(It->path());
  }
  return Files;
}

struct Counts {
  unsigned long Truncated = 0, Overwritten = 0, Deleted = 0, Replaced = 0,
                Prunes = 0, Clears = 0, PrunedEntries = 0;
};

} // namespace

int kiln::stress::runVandal(const std::string &RootText, double Seconds) {
  fs::path Root(RootText);
  std::mt19937_64 Rng(std::random_device{}());
  auto End = std::chrono::steady_clock::now() +
             std::chrono::microseconds(static_cast<int64_t>(Seconds * 1e6));
  Counts C;
  for (unsigned long Round = 1; std::chrono::steady_clock::now() < End;
       ++Round) {
    std::this_thread::sleep_for(std::chrono::microseconds(500 + Rng() % 1500));
    if (Round % 97 == 0) {
      // As `kiln-store prune --max-size=8K`, from another process.
      kiln::PruneResult R = kiln::pruneStore(Root.string(), 8 * 1024);
      ++C.Prunes;
      C.PrunedEntries += R.Removed;
      continue;
    }
    if (Round % 601 == 0) {
      // As `kiln-store clear`: every namespace folder goes.
      std::error_code EC;
      for (fs::directory_iterator It(Root, EC);
           !EC && It != fs::directory_iterator(); It.increment(EC)) {
        std::error_code RemoveEC;
        fs::remove_all(It->path(), RemoveEC);
      }
      ++C.Clears;
      continue;
    }
    std::vector<fs::path> Files = regularFilesUnder(Root);
    if (Files.empty())
      continue;
    const fs::path &F = Files[Rng() % Files.size()];
    std::error_code EC;
    uint64_t Size = fs::file_size(F, EC);
    if (EC)
      continue;
    switch (Rng() % 8) {
    case 0:
    case 1: // cut short
      fs::resize_file(F, Size ? Rng() % Size : 0, EC);
      C.Truncated += !EC;
      break;
    case 2:
    case 3: { // a few bytes overwritten in place
      if (FILE *Fp = std::fopen(F.c_str(), "r+b")) {
        if (Size)
          std::fseek(Fp, static_cast<long>(Rng() % Size), SEEK_SET);
        unsigned N = 1 + Rng() % 16;
        for (unsigned I = 0; I < N; ++I)
          std::fputc(static_cast<int>(Rng() & 0xff), Fp);
        std::fclose(Fp);
        ++C.Overwritten;
      }
      break;
    }
    case 4:
    case 5: // gone
      C.Deleted += fs::remove(F, EC);
      break;
    case 6: { // replaced by garbage of the same size
      if (FILE *Fp = std::fopen(F.c_str(), "wb")) {
        for (uint64_t I = 0; I < Size; ++I)
          std::fputc(static_cast<int>(Rng() & 0xff), Fp);
        std::fclose(Fp);
        ++C.Replaced;
      }
      break;
    }
    default: // left alone this time
      break;
    }
  }
  std::printf("vandal: %lu truncated, %lu overwritten, %lu deleted, %lu "
              "replaced, %lu prunes (%lu entries), %lu clears\n",
              C.Truncated, C.Overwritten, C.Deleted, C.Replaced, C.Prunes,
              C.PrunedEntries, C.Clears);
  return 0;
}
