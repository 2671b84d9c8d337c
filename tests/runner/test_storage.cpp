// The measurement cache: location, round trips, migrations, and the failures a caller survives.
#include "core/runner/JobJson.h"
#include "core/storage/MeasurementStore.h"

#include "TestSupport.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <fstream>

using namespace stitch;
using namespace stitch::storage;

namespace {

MeasurementKey key(const std::string &program = "p1")
{
    return MeasurementKey{program, "NVIDIA H200", 13000, "13.0", "s1"};
}

runner::JobResult result(double median)
{
    runner::JobResult r;
    r.programHash = "p1";
    r.seed = 5;
    r.device.name = "NVIDIA H200";
    r.device.arch = "sm_90";
    r.measuredAt = "2025-01-01T00:00:00Z";
    r.timing = runner::Timing{median, median - 0.1, median + 0.1, median, 3, 20, 0, {}};
    runner::Profile p;
    p.available = true;
    p.kernels.push_back(runner::KernelProfile{"matmul", "_Z6matmulPf", 10.0, 32, 0, 0, 0, {1, 1, 1}, {1, 1, 1}});
    r.profile = p;
    r.outputs.push_back(runner::OutputData{"C", ir::DType::F32, std::vector<std::byte>(8)});
    return r;
}

/// Runs SQL on a second, independent connection.
struct RawDb {
    explicit RawDb(const std::string &path) { sqlite3_open(path.c_str(), &db); }
    ~RawDb() { sqlite3_close(db); }
    int exec(const std::string &sql) { return sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); }
    std::int64_t scalar(const std::string &sql)
    {
        sqlite3_stmt *s = nullptr;
        sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
        std::int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
        sqlite3_finalize(s);
        return v;
    }
    sqlite3 *db = nullptr;
};

} // namespace

TEST(Storage, DefaultPathFollowsXdg)
{
    const char *oldXdg = std::getenv("XDG_DATA_HOME");
    const std::string saved = oldXdg ? oldXdg : "";
    ::setenv("XDG_DATA_HOME", "/tmp/xdg-here", 1);
    EXPECT_EQ(MeasurementStore::defaultPath(), "/tmp/xdg-here/stitchcuda/measurements.db");
    ::setenv("XDG_DATA_HOME", "relative/ignored", 1);
    ::setenv("HOME", "/home/someone", 1);
    EXPECT_EQ(MeasurementStore::defaultPath(), "/home/someone/.local/share/stitchcuda/measurements.db");
    if (oldXdg)
        ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
    else
        ::unsetenv("XDG_DATA_HOME");
}

TEST(Storage, StoresAndFindsTheNewestMeasurement)
{
    fixtures::TempDir dir;
    const std::string path = dir.file("xdg/stitchcuda/measurements.db");
    auto store = MeasurementStore::open(path);
    ASSERT_TRUE(store.ok()) << store.error().toString();
    auto miss = (*store)->lookup(key());
    ASSERT_TRUE(miss.ok());
    EXPECT_FALSE(miss->has_value());

    ASSERT_TRUE((*store)->store(key(), result(1.0)).ok());
    ASSERT_TRUE((*store)->store(key(), result(2.0)).ok());
    auto hit = (*store)->lookup(key());
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_TRUE((*hit)->fromCache);
    EXPECT_EQ((*hit)->timing->medianMs, 2.0);
    EXPECT_TRUE((*hit)->outputs.empty()) << "outputs are not cached";
    ASSERT_TRUE((*hit)->profile.has_value());
    EXPECT_EQ((*hit)->profile->kernels[0].registers, 32);
    EXPECT_EQ(*(*store)->count(), 2);

    MeasurementKey otherDriver = key();
    otherDriver.driverVersion = 12080;
    EXPECT_FALSE((*store)->lookup(otherDriver)->has_value());
    MeasurementKey otherSettings = key();
    otherSettings.settingsHash = "s2";
    EXPECT_FALSE((*store)->lookup(otherSettings)->has_value());

    RawDb raw(path);
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM kernel_profiles WHERE name = 'matmul'"), 2);
    EXPECT_EQ(raw.scalar("SELECT version FROM schema_version"), MeasurementStore::kSchemaVersion);
}

TEST(Storage, MigratesAVersionOneDatabaseAndKeepsItsRows)
{
    fixtures::TempDir dir;
    const std::string path = dir.file("measurements.db");
    {
        RawDb raw(path);
        ASSERT_EQ(raw.exec("CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1)"), SQLITE_OK);
        for (const auto &sql : schemaMigration(1))
            ASSERT_EQ(raw.exec(sql), SQLITE_OK) << sql;
        const std::string json = runner::resultToJson(result(3.0), nullptr).dump();
        std::string escaped;
        for (char c : json)
            escaped += c == '\'' ? std::string("''") : std::string(1, c);
        ASSERT_EQ(raw.exec("INSERT INTO measurements (program_hash, device_name, driver_version, toolkit_version, settings_hash,"
                           " measured_at, median_ms, result_json) VALUES ('p1', 'NVIDIA H200', 13000, '13.0', 's1', 'then', 3.0, '" +
                           escaped + "')"),
                  SQLITE_OK);
    }
    auto store = MeasurementStore::open(path);
    ASSERT_TRUE(store.ok()) << store.error().toString();
    auto hit = (*store)->lookup(key());
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->timing->medianMs, 3.0);
    RawDb raw(path);
    EXPECT_EQ(raw.scalar("SELECT version FROM schema_version"), 2);
    EXPECT_EQ(raw.scalar("SELECT count(*) FROM kernel_profiles"), 1) << "the migration backfills per-kernel rows";
}

TEST(Storage, CorruptFileIsATypedErrorNamingIt)
{
    fixtures::TempDir dir;
    const std::string path = dir.file("measurements.db");
    {
        std::ofstream out(path, std::ios::binary);
        for (int i = 0; i < 2000; ++i)
            out << "this is not a database ";
    }
    auto store = MeasurementStore::open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().kind, ErrorKind::Io);
    EXPECT_NE(store.error().message.find("corrupt"), std::string::npos) << store.error().message;
    EXPECT_NE(store.error().message.find(path), std::string::npos);
}

TEST(Storage, LockedDatabaseIsATypedErrorAfterTheBusyTimeout)
{
    fixtures::TempDir dir;
    const std::string path = dir.file("measurements.db");
    auto store = MeasurementStore::open(path, StoreOptions{100});
    ASSERT_TRUE(store.ok());
    RawDb other(path);
    ASSERT_EQ(other.exec("BEGIN EXCLUSIVE; INSERT INTO schema_version VALUES (2)"), SQLITE_OK);
    const auto began = std::chrono::steady_clock::now();
    auto st = (*store)->store(key(), result(1.0));
    const auto waited = std::chrono::steady_clock::now() - began;
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().kind, ErrorKind::Io);
    EXPECT_NE(st.error().message.find("locked"), std::string::npos) << st.error().message;
    EXPECT_LT(waited, std::chrono::seconds(5));
    ASSERT_EQ(other.exec("ROLLBACK"), SQLITE_OK);
    EXPECT_TRUE((*store)->store(key(), result(1.0)).ok()) << "usable again once the lock is gone";
}

TEST(Storage, NewerSchemaIsRefused)
{
    fixtures::TempDir dir;
    const std::string path = dir.file("measurements.db");
    ASSERT_TRUE(MeasurementStore::open(path).ok());
    {
        RawDb raw(path);
        ASSERT_EQ(raw.exec("UPDATE schema_version SET version = 99"), SQLITE_OK);
    }
    auto store = MeasurementStore::open(path);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().kind, ErrorKind::Unsupported);
    EXPECT_NE(store.error().message.find("99"), std::string::npos);
}

TEST(Storage, UncreatableFolderIsAnIoError)
{
    fixtures::TempDir dir;
    std::ofstream(dir.file("file")) << "x";
    auto store = MeasurementStore::open(dir.file("file/sub/measurements.db"));
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().kind, ErrorKind::Io);
}
