#include "core/agents/TrainingLog.h"

#include "core/storage/TextFile.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

namespace stitch::agents {

namespace {

struct Field {
    std::string_view text;
    int column = 1; ///< 1-based character column of its first character
};

std::vector<Field> splitLine(std::string_view line)
{
    std::vector<Field> fields;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = line.find(',', start);
        const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
        fields.push_back({line.substr(start, end - start), static_cast<int>(start) + 1});
        if (comma == std::string_view::npos)
            return fields;
        start = comma + 1;
    }
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::optional<double> number(std::string_view s)
{
    s = trimmed(s);
    if (s.empty())
        return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

int wholeNumber(double v) { return static_cast<int>(std::clamp(v, -1e9, 1e9)); }

/// Where each column goes; the held-out pair (no setter) is gathered into one HeldOutFigure.
struct ColumnBinding {
    const char *name;
    bool required;
    void (*set)(TrainProgress &, double);
};

const std::vector<ColumnBinding> &columnBindings()
{
    static const std::vector<ColumnBinding> bindings{
        {"update", true, [](TrainProgress &r, double v) { r.update = wholeNumber(v); }},
        {"episode", true, [](TrainProgress &r, double v) { r.episode = wholeNumber(v); }},
        {"mean_final_reward", true, [](TrainProgress &r, double v) { r.meanFinalReward = v; }},
        {"mean_return", true, [](TrainProgress &r, double v) { r.meanReturn = v; }},
        {"policy_loss", true, [](TrainProgress &r, double v) { r.stats.policyLoss = v; }},
        {"value_loss", true, [](TrainProgress &r, double v) { r.stats.valueLoss = v; }},
        {"entropy", true, [](TrainProgress &r, double v) { r.stats.entropy = v; }},
        {"approx_kl", false, [](TrainProgress &r, double v) { r.stats.approxKl = v; }},
        {"clip_fraction", false, [](TrainProgress &r, double v) { r.stats.clipFraction = v; }},
        {"explained_variance", false, [](TrainProgress &r, double v) { r.stats.explainedVariance = v; }},
        {"samples", false, [](TrainProgress &r, double v) { r.stats.samples = wholeNumber(v); }},
        {"seconds", false, [](TrainProgress &r, double v) { r.seconds = v; }},
        {"held_out", false, nullptr},
        {"held_out_lowest", false, nullptr},
    };
    return bindings;
}

} // namespace

const std::vector<std::string> &trainingLogRequiredColumns()
{
    static const std::vector<std::string> columns{"update",      "episode",    "mean_final_reward", "mean_return",
                                                  "policy_loss", "value_loss", "entropy"};
    return columns;
}

Result<TrainingLog> parseTrainingLog(const std::string &text, const std::string &file)
{
    TrainingLog log;
    log.file = file;
    const auto at = [&](int line, int column, const std::string &message) {
        return makeError(ErrorKind::Parse, message, SourceLocation{file, line, column});
    };
    if (text.find('\0') != std::string::npos)
        return at(1, 1, "not a training CSV: the file holds binary data");
    std::vector<std::string_view> lines;
    {
        std::string_view rest(text);
        while (!rest.empty()) {
            const std::size_t nl = rest.find('\n');
            lines.push_back(rest.substr(0, nl));
            if (nl == std::string_view::npos)
                break;
            rest.remove_prefix(nl + 1);
        }
    }
    if (lines.empty() || trimmed(lines[0]).empty())
        return at(1, 1, "empty: not a training CSV (expected the header " + std::string(trainingCsvHeader()) + ")");

    std::map<std::string, std::size_t, std::less<>> index;
    const std::vector<Field> header = splitLine(lines[0]);
    for (std::size_t i = 0; i < header.size(); ++i)
        index.emplace(std::string(trimmed(header[i].text)), i);
    for (const auto &name : trainingLogRequiredColumns())
        if (!index.count(name))
            return at(1, 1, "not a training CSV: the header has no column '" + name + "' (expected " +
                                std::string(trainingCsvHeader()) + ")");
    const auto column = [&](std::string_view name) -> std::optional<std::size_t> {
        const auto it = index.find(name);
        return it == index.end() ? std::nullopt : std::optional<std::size_t>(it->second);
    };
    log.hasHeldOut = column("held_out").has_value();
    log.hasDiagnostics = column("approx_kl").has_value();

    for (std::size_t l = 1; l < lines.size(); ++l) {
        const int lineNo = static_cast<int>(l) + 1;
        if (trimmed(lines[l]).empty())
            continue;
        const std::vector<Field> fields = splitLine(lines[l]);
        if (fields.size() != header.size()) {
            const bool last = l + 1 == lines.size() || (l + 2 == lines.size() && trimmed(lines[l + 1]).empty());
            return at(lineNo, static_cast<int>(trimmed(lines[l]).size()) + 1,
                      std::to_string(fields.size()) + " fields where the header has " + std::to_string(header.size()) +
                          (last && fields.size() < header.size() ? " (the file ends inside this row: truncated?)" : ""));
        }
        TrainProgress row;
        std::optional<double> heldOut, lowest;
        for (const ColumnBinding &b : columnBindings()) {
            const auto c = column(b.name);
            if (!c)
                continue;
            const Field &f = fields[*c];
            if (trimmed(f.text).empty() && !b.required)
                continue;
            const auto v = number(f.text);
            if (!v)
                return at(lineNo, f.column,
                          std::string(b.name) + ": expected a number, found '" + std::string(trimmed(f.text)) + "'");
            if (b.set)
                b.set(row, *v);
            else if (std::string_view(b.name) == "held_out")
                heldOut = *v;
            else
                lowest = *v;
        }
        if (heldOut)
            row.heldOut = HeldOutFigure{*heldOut, lowest.value_or(0), 0};
        if (!log.rows.empty() && row.update <= log.rows.back().update)
            return at(lineNo, fields[*column("update")].column,
                      "update " + std::to_string(row.update) + " after update " +
                          std::to_string(log.rows.back().update) + ": the rows are out of order");
        log.rows.push_back(std::move(row));
    }
    for (auto &row : log.rows)
        row.episodes = log.rows.back().episode;
    return log;
}

Result<TrainingLog> readTrainingLog(const std::string &path)
{
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return parseTrainingLog(*text, path);
}

} // namespace stitch::agents
