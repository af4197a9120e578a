//===- Status.cpp - Errors and element types of the public API ------------===//

#include "Internal.h"

#include "kiln/IR/Diagnostic.h"
#include "kiln/Runtime/Launch.h"

#include <system_error>

using namespace kiln;
using namespace kiln::api;

const char *api::errorCodeName(ErrorCode Code) {
  switch (Code) {
  case ErrorCode::Ok:
    return "ok";
  case ErrorCode::InvalidArgument:
    return "invalid argument";
  case ErrorCode::InvalidKernel:
    return "invalid kernel";
  case ErrorCode::InvalidLaunch:
    return "invalid launch";
  case ErrorCode::OutOfMemory:
    return "out of memory";
  case ErrorCode::StoreFailure:
    return "store failure";
  case ErrorCode::NotFound:
    return "not found";
  case ErrorCode::Cancelled:
    return "cancelled";
  case ErrorCode::Internal:
    return "internal error";
  case ErrorCode::KernelFault:
    return "kernel fault";
  }
  return "unknown error";
}

std::string Status::str() const {
  if (ok())
    return "ok";
  return std::string(errorCodeName(Code)) + ": " + Message;
}

Status detail::statusOf(llvm::Error E, ErrorCode Default) {
  if (!E)
    return Status();
  ErrorCode Code = Default;
  std::string Message;
  llvm::handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &D) {
        Code = ErrorCode::InvalidKernel;
        if (!Message.empty())
          Message += "\n";
        Message += D.message();
      },
      [&](const KernelFaultError &F) {
        Code = ErrorCode::KernelFault;
        if (!Message.empty())
          Message += "\n";
        Message += F.message();
      },
      [&](const llvm::ErrorInfoBase &Info) {
        if (Info.convertToErrorCode() ==
            std::make_error_code(std::errc::not_enough_memory))
          Code = ErrorCode::OutOfMemory;
        if (!Message.empty())
          Message += "\n";
        Message += Info.message();
      });
  return Status(Code, std::move(Message));
}

//===-- Element types -----------------------------------------------------===//

kiln::Type detail::irType(ElementType T) {
  auto Kind = static_cast<ScalarKind>(T.Scalar);
  return T.Lanes ? kiln::Type::line(Kind, T.Lanes) : kiln::Type::scalar(Kind);
}

ElementType detail::apiType(kiln::Type T) {
  auto S = static_cast<ScalarType>(T.elementKind());
  return T.isLine() ? ElementType::line(S, T.lanes()) : ElementType::scalar(S);
}

bool detail::isValidType(ElementType T) {
  return static_cast<unsigned>(T.Scalar) <=
             static_cast<unsigned>(ScalarType::UE8M0) &&
         (T.Lanes == 0 || kiln::Type::isValidLineWidth(T.Lanes));
}

kiln::AccessKind detail::irAccess(Access A) {
  switch (A) {
  case Access::Read:
    return AccessKind::Read;
  case Access::Write:
    return AccessKind::Write;
  case Access::ReadWrite:
    break;
  }
  return AccessKind::ReadWrite;
}

Access detail::apiAccess(kiln::AccessKind A) {
  switch (A) {
  case AccessKind::Read:
    return Access::Read;
  case AccessKind::Write:
    return Access::Write;
  case AccessKind::ReadWrite:
    break;
  }
  return Access::ReadWrite;
}

unsigned ElementType::sizeInBytes() const {
  if (!detail::isValidType(*this))
    return 0;
  return detail::irType(*this).storeSize();
}

unsigned ElementType::alignment() const {
  if (!detail::isValidType(*this))
    return 1;
  return byteSize(static_cast<ScalarKind>(Scalar));
}

std::string ElementType::str() const {
  if (!detail::isValidType(*this))
    return "<invalid type>";
  return detail::irType(*this).str();
}

Result<ElementType> ElementType::parse(std::string_view Text) {
  auto Bad = [&] {
    return Status(ErrorCode::InvalidArgument,
                  "'" + std::string(Text) +
                      "' is not an element type (a scalar such as f32, or a "
                      "line such as vec<4 x f32>)");
  };
  std::string_view T = Text;
  if (std::optional<ScalarKind> K = parseScalarName(llvm::StringRef(T.data(), T.size())))
    return ElementType::scalar(static_cast<ScalarType>(*K));
  // vec<N x T>
  if (T.size() < 8 || T.substr(0, 4) != "vec<" || T.back() != '>')
    return Bad();
  T = T.substr(4, T.size() - 5);
  size_t X = T.find(" x ");
  if (X == std::string_view::npos || X == 0 || X > 2)
    return Bad();
  unsigned Lanes = 0;
  for (char C : T.substr(0, X)) {
    if (C < '0' || C > '9')
      return Bad();
    Lanes = Lanes * 10 + unsigned(C - '0');
  }
  std::string_view Elem = T.substr(X + 3);
  std::optional<ScalarKind> K =
      parseScalarName(llvm::StringRef(Elem.data(), Elem.size()));
  if (!K || !kiln::Type::isValidLineWidth(Lanes))
    return Bad();
  return ElementType::line(static_cast<ScalarType>(*K), Lanes);
}
