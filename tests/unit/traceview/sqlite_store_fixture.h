#pragma once
// A test with a fresh SQLite trace store of its own: a directory per test (named by its prefix, the
// process and the test), the store file in it, a writer open on it, removed afterwards. The trace
// view's API and settler tests read what they Write() through their own store location (path_).

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tracing/span.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview_test {

class SqliteStoreFixture : public ::testing::Test {
 protected:
  // `prefix` names the test's directory under the system's temporary one.
  explicit SqliteStoreFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "traces.db").string();
    writer_ = Open();
    ASSERT_NE(writer_, nullptr);
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Another connection to the test's store (a second reader or writer).
  std::unique_ptr<tracing::store::SqliteSpanStore> Open() {
    auto store = tracing::store::SqliteSpanStore::Open(path_);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(store).value() : nullptr;
  }

  void Write(const std::vector<tracing::Span>& spans) {
    auto written = writer_->Write(spans);
    ASSERT_TRUE(written.ok()) << written.error().message;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<tracing::store::SqliteSpanStore> writer_;

 private:
  std::string prefix_;
};

}  // namespace sparktrace::traceview_test
