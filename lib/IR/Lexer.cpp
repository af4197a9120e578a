//===- Lexer.cpp - Tokens of the Kiln IR text form ------------------------===//

#include "Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace kiln;

bool kiln::isNameChar(char C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_' || C == '.';
}

// Words hold op names, types and literals; '+' and '-' are word characters so
// that `-3`, `-inf` and `1e-5` are single tokens (the IR has no infix
// operators, so nothing else needs them).
static bool isWordChar(char C) { return isNameChar(C) || C == '+' || C == '-'; }

/// Whether \p C, followed by \p Next, begins some token, white space or a
/// comment (LangRef §4.1); any other byte is an "unexpected character"
/// wherever it is.
static bool beginsSomething(char C, char Next) {
  if (C == '/')
    return Next == '/';
  return isWordChar(C) || llvm::StringRef(" \t\r\n%@\"(){}[]<>,:=").contains(C);
}

std::string kiln::describeChar(char C) {
  unsigned char U = static_cast<unsigned char>(C);
  std::string S;
  llvm::raw_string_ostream OS(S);
  if (U >= 0x20 && U < 0x7f)
    OS << '\'' << C << '\'';
  else
    OS << "'\\x" << llvm::format_hex_no_prefix(U, 2) << '\'';
  return S;
}

void Lexer::advance() {
  if (Buf[Pos] == '\n') {
    ++Line;
    Col = 1;
  } else {
    ++Col;
  }
  ++Pos;
}

void Lexer::skipSpaceAndComments() {
  while (!atEnd()) {
    char C = peek();
    if (C == ' ' || C == '\t' || C == '\n' || C == '\r') {
      advance();
    } else if (C == '/' && peek(1) == '/') {
      while (!atEnd() && peek() != '\n')
        advance();
    } else {
      return;
    }
  }
}

Token Lexer::make(TokenKind Kind, size_t Begin, SourceLoc Loc) const {
  Token T;
  T.Kind = Kind;
  T.Text = Buf.slice(Begin, Pos);
  T.Loc = Loc;
  return T;
}

Token Lexer::next() {
  skipSpaceAndComments();
  SourceLoc Loc{Line, Col};
  size_t Begin = Pos;
  if (atEnd())
    return make(TokenKind::Eof, Begin, Loc);

  char C = peek();
  auto Single = [&](TokenKind Kind) {
    advance();
    return make(Kind, Begin, Loc);
  };
  switch (C) {
  case '(':
    return Single(TokenKind::LParen);
  case ')':
    return Single(TokenKind::RParen);
  case '{':
    return Single(TokenKind::LBrace);
  case '}':
    return Single(TokenKind::RBrace);
  case '[':
    return Single(TokenKind::LSquare);
  case ']':
    return Single(TokenKind::RSquare);
  case '<':
    return Single(TokenKind::Less);
  case '>':
    return Single(TokenKind::Greater);
  case ',':
    return Single(TokenKind::Comma);
  case ':':
    return Single(TokenKind::Colon);
  case '=':
    return Single(TokenKind::Equal);
  case '%':
  case '@': {
    advance();
    size_t NameBegin = Pos;
    while (!atEnd() && isNameChar(peek()))
      advance();
    if (Pos == NameBegin) {
      if (!atEnd() && !beginsSomething(peek(), peek(1))) {
        // `%é`: the byte is the mistake, not a missing name.
        Token T = make(TokenKind::Error, Pos, SourceLoc{Line, Col});
        T.Message = "unexpected character " + describeChar(peek());
        return T;
      }
      Token T = make(TokenKind::Error, Begin, Loc);
      T.Message = std::string("expected a name after '") + C + "'";
      return T;
    }
    Token T = make(C == '%' ? TokenKind::ValueName : TokenKind::GlobalName,
                   NameBegin, Loc);
    return T;
  }
  case '"':
    return lexString(Begin, Loc);
  default:
    break;
  }
  if (isWordChar(C)) {
    while (!atEnd() && isWordChar(peek()))
      advance();
    return make(TokenKind::Word, Begin, Loc);
  }
  Token T = make(TokenKind::Error, Begin, Loc);
  T.Message = "unexpected character " + describeChar(C);
  return T;
}

Token Lexer::lexString(size_t Begin, SourceLoc Loc) {
  advance(); // the opening quote
  std::string Bytes;
  auto Fail = [&](SourceLoc At, const std::string &Message) {
    Token T = make(TokenKind::Error, Begin, At);
    T.Message = Message;
    return T;
  };
  for (;;) {
    SourceLoc Here{Line, Col};
    if (atEnd() || peek() == '\n')
      return Fail(Loc, "unterminated string literal: it must end with '\"' "
                       "on the line it starts");
    char C = peek();
    if (C == '"') {
      advance();
      break;
    }
    if (C == '\\') {
      advance();
      char E = atEnd() ? '\0' : peek();
      switch (E) {
      case 'n':
        Bytes += '\n';
        break;
      case 't':
        Bytes += '\t';
        break;
      case 'r':
        Bytes += '\r';
        break;
      case '"':
      case '\\':
        Bytes += E;
        break;
      case 'x': {
        unsigned Hi = llvm::hexDigitValue(peek(1));
        unsigned Lo = llvm::hexDigitValue(peek(2));
        if (Hi == -1U || Lo == -1U)
          return Fail(Here, "'\\x' in a string literal takes two hex digits");
        if (Hi == 0 && Lo == 0)
          return Fail(Here, "'\\x00' is not allowed in a string literal");
        Bytes += char(Hi * 16 + Lo);
        advance();
        advance();
        break;
      }
      default:
        if (atEnd() || E == '\n')
          return Fail(Loc, "unterminated string literal: it must end with "
                           "'\"' on the line it starts");
        return Fail(Here, "unknown escape '\\" +
                              (static_cast<unsigned char>(E) >= 0x20 &&
                                       static_cast<unsigned char>(E) < 0x7f
                                   ? std::string(1, E)
                                   : describeChar(E)) +
                              "' in a string literal: use \\n, \\t, \\r, "
                              "\\\\, \\\" or \\xHH");
      }
      advance();
      continue;
    }
    if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f)
      return Fail(Here, "character " + describeChar(C) +
                            " in a string literal: write it as an escape");
    // Printable ASCII and the bytes of UTF-8 text are taken as they are.
    Bytes += C;
    advance();
  }
  Token T = make(TokenKind::String, Begin, Loc);
  T.Decoded = std::move(Bytes);
  return T;
}
