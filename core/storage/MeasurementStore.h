#pragma once
// The measurement cache: every JobResult in SQLite, keyed by what was measured and where.
//   Runner -> MeasurementStore::lookup (hit: no GPU work) | WorkerClient result -> MeasurementStore::store
// $XDG_DATA_HOME/stitchcuda/measurements.db by default. A corrupt, locked or unreadable database
// is an Io error; callers then measure without the cache instead of failing.

#include "core/common/Result.h"
#include "core/runner/JobResult.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace stitch::storage {

/// What makes two measurements interchangeable.
struct MeasurementKey {
    std::string programHash;    ///< runner::programHash: module + launch plan
    std::string deviceName;     ///< "NVIDIA H200"
    int driverVersion = 0;      ///< 13000
    std::string toolkitVersion; ///< "13.0"
    std::string settingsHash;   ///< runner::settingsHash: what was measured and against which reference
};

struct StoreOptions {
    int busyTimeoutMs = 250; ///< how long to wait for another process's lock before reporting "locked"
};

/// One connection to the database. Not thread-safe: use it from one thread (the runner's).
class MeasurementStore {
public:
    /// The schema this build writes; older files are migrated on open.
    static constexpr int kSchemaVersion = 2;

    /// $XDG_DATA_HOME/stitchcuda/measurements.db, or ~/.local/share/stitchcuda/measurements.db.
    /// Empty when neither XDG_DATA_HOME nor HOME is set.
    static std::string defaultPath();

    /// Opens (creating the folder and file if needed) and migrates to kSchemaVersion.
    /// Io: cannot create, corrupt ("not a database"), locked. Unsupported: written by a newer build.
    static Result<std::unique_ptr<MeasurementStore>> open(const std::string &path, StoreOptions options = {});

    ~MeasurementStore();
    MeasurementStore(const MeasurementStore &) = delete;
    MeasurementStore &operator=(const MeasurementStore &) = delete;

    const std::string &path() const { return m_path; }
    /// The newest measurement for the key, with fromCache set; nullopt when there is none.
    Result<std::optional<runner::JobResult>> lookup(const MeasurementKey &key);
    /// Adds a measurement (outputs are not stored), with one row per profiled kernel.
    Status store(const MeasurementKey &key, const runner::JobResult &result);
    /// Number of stored measurements.
    Result<std::int64_t> count();

private:
    MeasurementStore(sqlite3 *db, std::string path) : m_db(db), m_path(std::move(path)) {}
    Status migrate();

    sqlite3 *m_db = nullptr;
    std::string m_path;
};

/// The SQL that creates schema version `version` from the previous one (1: from nothing).
/// Exposed so that tests can build an old database and watch it migrate.
const std::vector<std::string> &schemaMigration(int version);

} // namespace stitch::storage
