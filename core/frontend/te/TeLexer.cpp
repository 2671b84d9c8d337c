#include "core/frontend/te/TeLexer.h"

#include <cstdio>

namespace stitch::frontend::te {

namespace {

bool isIdentStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

bool isIdentChar(char c)
{
    return isIdentStart(c) || isDigit(c);
}

// After these a newline cannot end a statement, so a long formula may wrap after an operator.
bool continuesStatement(TokenKind kind)
{
    switch (kind) {
    case TokenKind::Comma:
    case TokenKind::Colon:
    case TokenKind::Assign:
    case TokenKind::Question:
    case TokenKind::Plus:
    case TokenKind::Minus:
    case TokenKind::Star:
    case TokenKind::Slash:
    case TokenKind::SlashSlash:
    case TokenKind::Percent:
    case TokenKind::Less:
    case TokenKind::LessEqual:
    case TokenKind::Greater:
    case TokenKind::GreaterEqual:
    case TokenKind::EqualEqual:
    case TokenKind::NotEqual:
    case TokenKind::AndAnd:
    case TokenKind::OrOr:
    case TokenKind::Bang:
    case TokenKind::LParen:
    case TokenKind::LBracket:
        return true;
    default:
        return false;
    }
}

class Lexer {
public:
    explicit Lexer(std::string_view source) : m_source(source) {}

    std::vector<Token> run()
    {
        while (m_pos < m_source.size()) {
            const char c = m_source[m_pos];
            if (c == '\n') {
                newlineToken();
                advance(1);
                ++m_line;
                m_lineStart = m_pos;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                advance(1);
            } else if (c == '#') {
                while (m_pos < m_source.size() && m_source[m_pos] != '\n')
                    advance(1);
            } else if (isIdentStart(c)) {
                std::size_t end = m_pos;
                while (end < m_source.size() && isIdentChar(m_source[end]))
                    ++end;
                emit(TokenKind::Identifier, end - m_pos);
            } else if (isDigit(c) || (c == '.' && peekIsDigit(1))) {
                number();
            } else {
                punctuation(c);
            }
        }
        Token eof;
        eof.kind = TokenKind::EndOfFile;
        eof.text = m_source.substr(m_source.size());
        setPosition(eof);
        m_tokens.push_back(eof);
        return std::move(m_tokens);
    }

private:
    bool peekIsDigit(std::size_t ahead) const
    {
        return m_pos + ahead < m_source.size() && isDigit(m_source[m_pos + ahead]);
    }

    void advance(std::size_t n) { m_pos += n; }

    void setPosition(Token &token) const
    {
        token.line = m_line;
        token.column = static_cast<int>(m_pos - m_lineStart) + 1;
        token.offset = m_pos;
    }

    void emit(TokenKind kind, std::size_t length)
    {
        Token token;
        token.kind = kind;
        token.text = m_source.substr(m_pos, length);
        setPosition(token);
        m_tokens.push_back(token);
        if (kind == TokenKind::LParen || kind == TokenKind::LBracket)
            ++m_depth;
        else if ((kind == TokenKind::RParen || kind == TokenKind::RBracket) && m_depth > 0)
            --m_depth;
        advance(length);
    }

    void newlineToken()
    {
        if (m_depth > 0 || m_tokens.empty() || m_tokens.back().kind == TokenKind::EndOfStatement
            || continuesStatement(m_tokens.back().kind))
            return;
        Token token; // the caller consumes the newline itself, as it must also count the line
        token.kind = TokenKind::EndOfStatement;
        token.text = m_source.substr(m_pos, 1);
        setPosition(token);
        m_tokens.push_back(token);
    }

    void number()
    {
        std::size_t end = m_pos;
        bool isFloat = false;
        while (end < m_source.size() && isDigit(m_source[end]))
            ++end;
        if (end < m_source.size() && m_source[end] == '.') {
            isFloat = true;
            ++end;
            while (end < m_source.size() && isDigit(m_source[end]))
                ++end;
        }
        bool malformed = false;
        if (end < m_source.size() && (m_source[end] == 'e' || m_source[end] == 'E')) {
            std::size_t exp = end + 1;
            if (exp < m_source.size() && (m_source[exp] == '+' || m_source[exp] == '-'))
                ++exp;
            if (exp < m_source.size() && isDigit(m_source[exp])) {
                isFloat = true;
                end = exp;
                while (end < m_source.size() && isDigit(m_source[end]))
                    ++end;
            } else {
                malformed = true;
            }
        }
        // "2x", "1.5.3" and "3e" are one bad token, not a number followed by something else:
        // that reads better in the error message.
        while (end < m_source.size() && (isIdentChar(m_source[end]) || m_source[end] == '.')) {
            malformed = true;
            ++end;
        }
        emit(malformed ? TokenKind::Invalid : (isFloat ? TokenKind::Float : TokenKind::Integer), end - m_pos);
    }

    void punctuation(char c)
    {
        const char next = m_pos + 1 < m_source.size() ? m_source[m_pos + 1] : '\0';
        auto two = [&](char second, TokenKind kind) {
            if (next != second)
                return false;
            emit(kind, 2);
            return true;
        };
        switch (c) {
        case '(': emit(TokenKind::LParen, 1); return;
        case ')': emit(TokenKind::RParen, 1); return;
        case '[': emit(TokenKind::LBracket, 1); return;
        case ']': emit(TokenKind::RBracket, 1); return;
        case ',': emit(TokenKind::Comma, 1); return;
        case ':': emit(TokenKind::Colon, 1); return;
        case '?': emit(TokenKind::Question, 1); return;
        case '+': emit(TokenKind::Plus, 1); return;
        case '-': emit(TokenKind::Minus, 1); return;
        case '*': emit(TokenKind::Star, 1); return;
        case '%': emit(TokenKind::Percent, 1); return;
        case ';':
            if (m_tokens.empty() || m_tokens.back().kind == TokenKind::EndOfStatement)
                advance(1);
            else
                emit(TokenKind::EndOfStatement, 1);
            return;
        case '/':
            if (!two('/', TokenKind::SlashSlash))
                emit(TokenKind::Slash, 1);
            return;
        case '<':
            if (!two('=', TokenKind::LessEqual))
                emit(TokenKind::Less, 1);
            return;
        case '>':
            if (!two('=', TokenKind::GreaterEqual))
                emit(TokenKind::Greater, 1);
            return;
        case '=':
            if (!two('=', TokenKind::EqualEqual))
                emit(TokenKind::Assign, 1);
            return;
        case '!':
            if (!two('=', TokenKind::NotEqual))
                emit(TokenKind::Bang, 1);
            return;
        case '&':
            if (!two('&', TokenKind::AndAnd))
                emit(TokenKind::Invalid, 1);
            return;
        case '|':
            if (!two('|', TokenKind::OrOr))
                emit(TokenKind::Invalid, 1);
            return;
        default:
            emit(TokenKind::Invalid, 1);
            return;
        }
    }

    std::string_view m_source;
    std::vector<Token> m_tokens;
    std::size_t m_pos = 0;
    std::size_t m_lineStart = 0;
    int m_line = 1;
    int m_depth = 0;
};

} // namespace

std::vector<Token> tokenize(std::string_view source)
{
    return Lexer(source).run();
}

std::string describeToken(const Token &token)
{
    switch (token.kind) {
    case TokenKind::EndOfFile:
        return "end of file";
    case TokenKind::EndOfStatement:
        return token.text == ";" ? "';'" : "end of line";
    case TokenKind::Invalid: {
        const char first = token.text.empty() ? '\0' : token.text[0];
        if (isDigit(first) || first == '.')
            return "malformed number '" + std::string(token.text) + "'";
        const auto byte = static_cast<unsigned char>(first);
        if (byte < 0x20 || byte >= 0x7f) {
            char buffer[32];
            std::snprintf(buffer, sizeof buffer, "unexpected byte 0x%02x", byte);
            return buffer;
        }
        return "unexpected character '" + std::string(token.text) + "'";
    }
    default:
        return "'" + std::string(token.text) + "'";
    }
}

} // namespace stitch::frontend::te
