//===- KeepLoop.h - A loop the optimiser leaves a loop ----------*- C++ -*-===//
//
// Loops whose point is a short body (the loop over a cube's planes, a
// 64-bit product scan written as a loop) carry this loop ID on their latch's
// branch: `llvm.loop.unroll.disable` and `llvm.loop.vectorize.enable` false.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_CPU_KEEPLOOP_H
#define KILN_LIB_CPU_KEEPLOOP_H

#include "llvm/IR/Constants.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"

namespace kiln {

/// Neither unrolled nor vectorised: the loop ID on \p LatchBranch.
inline void keepLoop(llvm::Instruction *LatchBranch) {
  llvm::LLVMContext &Ctx = LatchBranch->getContext();
  llvm::Metadata *NoUnroll = llvm::MDNode::get(
      Ctx, {llvm::MDString::get(Ctx, "llvm.loop.unroll.disable")});
  llvm::Metadata *NoVectorize = llvm::MDNode::get(
      Ctx, {llvm::MDString::get(Ctx, "llvm.loop.vectorize.enable"),
            llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(Ctx))});
  llvm::MDNode *ID =
      llvm::MDNode::getDistinct(Ctx, {nullptr, NoUnroll, NoVectorize});
  ID->replaceOperandWith(0, ID);
  LatchBranch->setMetadata(llvm::LLVMContext::MD_loop, ID);
}

} // namespace kiln

#endif // KILN_LIB_CPU_KEEPLOOP_H
