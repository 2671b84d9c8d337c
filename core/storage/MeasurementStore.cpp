#include "core/storage/MeasurementStore.h"

#include "core/runner/JobJson.h"

#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>

namespace stitch::storage {

namespace {

Error sqlError(sqlite3 *db, int rc, const std::string &path, const std::string &what)
{
    const std::string detail = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return makeError(ErrorKind::Io, "the measurement database " + path + " is locked by another process (" + detail + ")");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return makeError(ErrorKind::Io, "the measurement database " + path + " is corrupt (" + detail +
                                            "); move it aside and a fresh one is started");
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
        return makeError(ErrorKind::Io, "cannot open the measurement database " + path + " for writing (" + detail + ")");
    default:
        return makeError(ErrorKind::Io, "measurement database " + path + ": " + what + " failed (" + detail + ")");
    }
}

/// A prepared statement, finalized on destruction.
class Statement {
public:
    Statement(sqlite3 *db, const char *sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    int prepareResult() const { return m_rc; }
    void bind(int i, const std::string &s) { sqlite3_bind_text(m_stmt, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT); }
    void bind(int i, std::int64_t v) { sqlite3_bind_int64(m_stmt, i, v); }
    void bind(int i, double v) { sqlite3_bind_double(m_stmt, i, v); }
    void bindNull(int i) { sqlite3_bind_null(m_stmt, i); }
    int step() { return sqlite3_step(m_stmt); }
    void reset()
    {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    }
    std::int64_t integer(int col) const { return sqlite3_column_int64(m_stmt, col); }
    std::string text(int col) const
    {
        const auto *p = sqlite3_column_text(m_stmt, col);
        return p ? std::string(reinterpret_cast<const char *>(p), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, col))) : std::string();
    }

private:
    sqlite3_stmt *m_stmt = nullptr;
    int m_rc = SQLITE_OK;
};

int exec(sqlite3 *db, const std::string &sql)
{
    return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
}

/// Rolls back unless committed, so every early return leaves the database as it was.
class Transaction {
public:
    explicit Transaction(sqlite3 *db) : m_db(db) { m_rc = exec(db, "BEGIN IMMEDIATE"); }
    ~Transaction()
    {
        if (m_rc == SQLITE_OK && !m_done)
            exec(m_db, "ROLLBACK");
    }
    int beginResult() const { return m_rc; }
    int commit()
    {
        m_done = true;
        return exec(m_db, "COMMIT");
    }

private:
    sqlite3 *m_db;
    int m_rc;
    bool m_done = false;
};

int insertKernels(sqlite3 *db, std::int64_t measurementId, const runner::JobResult &r)
{
    if (!r.profile)
        return SQLITE_OK;
    Statement row(db, "INSERT INTO kernel_profiles (measurement_id, position, name, mangled_name, duration_us, registers,"
                      " static_shared_bytes, dynamic_shared_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    if (row.prepareResult() != SQLITE_OK)
        return row.prepareResult();
    std::int64_t position = 0;
    for (const auto &k : r.profile->kernels) {
        row.reset();
        row.bind(1, measurementId);
        row.bind(2, position++);
        row.bind(3, k.name);
        row.bind(4, k.mangledName);
        row.bind(5, k.durationUs);
        row.bind(6, std::int64_t{k.registers});
        row.bind(7, std::int64_t{k.staticSharedBytes});
        row.bind(8, std::int64_t{k.dynamicSharedBytes});
        if (const int rc = row.step(); rc != SQLITE_DONE)
            return rc;
    }
    return SQLITE_OK;
}

} // namespace

const std::vector<std::string> &schemaMigration(int version)
{
    static const std::vector<std::vector<std::string>> migrations = {
        {},
        // 1: one row per measurement; the full JobResult as JSON, the figures a query filters on as columns.
        {"CREATE TABLE measurements ("
         " id INTEGER PRIMARY KEY AUTOINCREMENT,"
         " program_hash TEXT NOT NULL, device_name TEXT NOT NULL, driver_version INTEGER NOT NULL,"
         " toolkit_version TEXT NOT NULL, settings_hash TEXT NOT NULL, measured_at TEXT NOT NULL,"
         " median_ms REAL, min_ms REAL, max_ms REAL, verified INTEGER, result_json TEXT NOT NULL)",
         "CREATE INDEX measurements_key ON measurements"
         " (program_hash, device_name, driver_version, toolkit_version, settings_hash)"},
        // 2: per-kernel rows, so profiles can be queried by kernel name (backfilled from result_json).
        {"CREATE TABLE kernel_profiles ("
         " measurement_id INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,"
         " position INTEGER NOT NULL, name TEXT NOT NULL, mangled_name TEXT NOT NULL, duration_us REAL,"
         " registers INTEGER, static_shared_bytes INTEGER, dynamic_shared_bytes INTEGER,"
         " PRIMARY KEY (measurement_id, position))",
         "CREATE INDEX kernel_profiles_name ON kernel_profiles (name)"},
    };
    static const std::vector<std::string> none;
    return version >= 1 && version < static_cast<int>(migrations.size()) ? migrations[static_cast<std::size_t>(version)] : none;
}

std::string MeasurementStore::defaultPath()
{
    namespace fs = std::filesystem;
    if (const char *xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg && fs::path(xdg).is_absolute())
        return (fs::path(xdg) / "stitchcuda" / "measurements.db").string();
    if (const char *home = std::getenv("HOME"); home && *home)
        return (fs::path(home) / ".local" / "share" / "stitchcuda" / "measurements.db").string();
    return {};
}

Result<std::unique_ptr<MeasurementStore>> MeasurementStore::open(const std::string &path, StoreOptions options)
{
    if (path.empty())
        return makeError(ErrorKind::Io, "no location for the measurement database (neither XDG_DATA_HOME nor HOME is set)");
    std::error_code ec;
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty())
        std::filesystem::create_directories(dir, ec);
    if (ec)
        return makeError(ErrorKind::Io, "cannot create " + dir.string() + ": " + ec.message());
    sqlite3 *db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
        Error e = sqlError(db, rc, path, "open");
        sqlite3_close(db);
        return e;
    }
    std::unique_ptr<MeasurementStore> store(new MeasurementStore(db, path));
    sqlite3_busy_timeout(db, options.busyTimeoutMs);
    sqlite3_extended_result_codes(db, 1);
    // WAL lets the studio read while a CLI run writes. The pragma is also the first statement that
    // reads the file, so a file that is not a database is reported here.
    if (const int w = exec(db, "PRAGMA journal_mode=WAL"); w != SQLITE_OK)
        return sqlError(db, w, path, "open");
    exec(db, "PRAGMA foreign_keys=ON");
    if (auto st = store->migrate(); !st)
        return st.error();
    return store;
}

MeasurementStore::~MeasurementStore()
{
    sqlite3_close(m_db);
}

Status MeasurementStore::migrate()
{
    auto readVersion = [&]() -> Result<int> {
        Statement exists(m_db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
        if (exists.prepareResult() != SQLITE_OK)
            return sqlError(m_db, exists.prepareResult(), m_path, "reading the schema version");
        if (const int rc = exists.step(); rc != SQLITE_ROW)
            return sqlError(m_db, rc, m_path, "reading the schema version");
        if (exists.integer(0) == 0)
            return 0;
        Statement v(m_db, "SELECT max(version) FROM schema_version");
        if (v.prepareResult() != SQLITE_OK || v.step() != SQLITE_ROW)
            return sqlError(m_db, v.prepareResult() != SQLITE_OK ? v.prepareResult() : SQLITE_CORRUPT, m_path, "reading the schema version");
        return static_cast<int>(v.integer(0));
    };
    auto version = readVersion();
    if (!version)
        return version.error();
    if (*version == kSchemaVersion)
        return Ok{};
    if (*version > kSchemaVersion)
        return makeError(ErrorKind::Unsupported, "the measurement database " + m_path + " has schema version " +
                                                     std::to_string(*version) + ", newer than this build's " +
                                                     std::to_string(kSchemaVersion) + " (written by a newer StitchCUDA)");
    Transaction tx(m_db);
    if (tx.beginResult() != SQLITE_OK)
        return sqlError(m_db, tx.beginResult(), m_path, "migrating");
    // Another process may have migrated while this one waited for the lock.
    version = readVersion();
    if (!version)
        return version.error();
    if (const int rc = exec(m_db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"); rc != SQLITE_OK)
        return sqlError(m_db, rc, m_path, "migrating");
    for (int v = *version + 1; v <= kSchemaVersion; ++v) {
        for (const auto &sql : schemaMigration(v))
            if (const int rc = exec(m_db, sql); rc != SQLITE_OK)
                return sqlError(m_db, rc, m_path, "migrating to schema " + std::to_string(v));
        if (v == 2) {
            Statement rows(m_db, "SELECT id, result_json FROM measurements");
            while (rows.step() == SQLITE_ROW) {
                auto parsed = nlohmann::json::parse(rows.text(1), nullptr, false);
                auto result = parsed.is_discarded() ? Result<runner::JobResult>(makeError(ErrorKind::Parse, "bad json"))
                                                    : runner::resultFromJson(parsed, nullptr);
                if (result) // a row that does not parse keeps its measurement, without kernel rows
                    if (const int rc = insertKernels(m_db, rows.integer(0), *result); rc != SQLITE_OK)
                        return sqlError(m_db, rc, m_path, "migrating to schema 2");
            }
        }
    }
    Statement set(m_db, "INSERT INTO schema_version (version) VALUES (?)");
    set.bind(1, std::int64_t{kSchemaVersion});
    if (const int rc = exec(m_db, "DELETE FROM schema_version"); rc != SQLITE_OK)
        return sqlError(m_db, rc, m_path, "migrating");
    if (const int rc = set.step(); rc != SQLITE_DONE)
        return sqlError(m_db, rc, m_path, "migrating");
    if (const int rc = tx.commit(); rc != SQLITE_OK)
        return sqlError(m_db, rc, m_path, "migrating");
    return Ok{};
}

Result<std::optional<runner::JobResult>> MeasurementStore::lookup(const MeasurementKey &key)
{
    Statement q(m_db, "SELECT result_json FROM measurements WHERE program_hash = ? AND device_name = ? AND driver_version = ?"
                      " AND toolkit_version = ? AND settings_hash = ? ORDER BY id DESC LIMIT 1");
    if (q.prepareResult() != SQLITE_OK)
        return sqlError(m_db, q.prepareResult(), m_path, "lookup");
    q.bind(1, key.programHash);
    q.bind(2, key.deviceName);
    q.bind(3, std::int64_t{key.driverVersion});
    q.bind(4, key.toolkitVersion);
    q.bind(5, key.settingsHash);
    const int rc = q.step();
    if (rc == SQLITE_DONE)
        return std::optional<runner::JobResult>();
    if (rc != SQLITE_ROW)
        return sqlError(m_db, rc, m_path, "lookup");
    auto json = nlohmann::json::parse(q.text(0), nullptr, false);
    if (json.is_discarded())
        return makeError(ErrorKind::Io, "the measurement database " + m_path + " is corrupt (an entry is not JSON)");
    auto result = runner::resultFromJson(json, nullptr);
    if (!result)
        return makeError(ErrorKind::Io, "the measurement database " + m_path + " is corrupt (" + result.error().message + ")");
    result->fromCache = true;
    return std::optional<runner::JobResult>(std::move(*result));
}

Status MeasurementStore::store(const MeasurementKey &key, const runner::JobResult &result)
{
    Transaction tx(m_db);
    if (tx.beginResult() != SQLITE_OK)
        return sqlError(m_db, tx.beginResult(), m_path, "store");
    runner::JobResult stored = result;
    stored.outputs.clear();
    stored.fromCache = false;
    Statement ins(m_db, "INSERT INTO measurements (program_hash, device_name, driver_version, toolkit_version, settings_hash,"
                        " measured_at, median_ms, min_ms, max_ms, verified, result_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (ins.prepareResult() != SQLITE_OK)
        return sqlError(m_db, ins.prepareResult(), m_path, "store");
    ins.bind(1, key.programHash);
    ins.bind(2, key.deviceName);
    ins.bind(3, std::int64_t{key.driverVersion});
    ins.bind(4, key.toolkitVersion);
    ins.bind(5, key.settingsHash);
    ins.bind(6, result.measuredAt);
    if (result.timing) {
        ins.bind(7, result.timing->medianMs);
        ins.bind(8, result.timing->minMs);
        ins.bind(9, result.timing->maxMs);
    } else {
        ins.bindNull(7), ins.bindNull(8), ins.bindNull(9);
    }
    if (result.verification)
        ins.bind(10, std::int64_t{result.verification->verified ? 1 : 0});
    else
        ins.bindNull(10);
    ins.bind(11, runner::resultToJson(stored, nullptr).dump());
    if (const int rc = ins.step(); rc != SQLITE_DONE)
        return sqlError(m_db, rc, m_path, "store");
    if (const int rc = insertKernels(m_db, sqlite3_last_insert_rowid(m_db), result); rc != SQLITE_OK)
        return sqlError(m_db, rc, m_path, "store");
    if (const int rc = tx.commit(); rc != SQLITE_OK)
        return sqlError(m_db, rc, m_path, "store");
    return Ok{};
}

Result<std::int64_t> MeasurementStore::count()
{
    Statement q(m_db, "SELECT count(*) FROM measurements");
    if (q.prepareResult() != SQLITE_OK)
        return sqlError(m_db, q.prepareResult(), m_path, "count");
    if (const int rc = q.step(); rc != SQLITE_ROW)
        return sqlError(m_db, rc, m_path, "count");
    return q.integer(0);
}

} // namespace stitch::storage
