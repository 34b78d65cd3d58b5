#pragma once
// The fixture of the trace stores' conformance suite (tracing/store/span_store.h), shared by its files:
// every test runs against each backend, SQLite (a file per test) and PostgreSQL (a database per test on
// the real server CTest starts: tests/support/postgres_server.py, fixture `postgres` in
// tests/CMakeLists.txt). What only one backend has (files, WAL, locks) is tested beside it
// (sqlite_span_store_test.cc, postgres_span_store_test.cc).
//
// The suite is instantiated once, in span_store_conformance_test.cc; that instantiation runs every
// file's TEST_P of this fixture (which is why it is not in an anonymous namespace).

#include <gtest/gtest.h>

#include <memory>

#include "tests/unit/tracing/store/store_test_backends.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {

class SpanStoreConformance : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::unique_ptr<SpanStore> OpenStore(StoreOptions options = {}) { return backend_.Open(options); }
  std::unique_ptr<SpanStore> OpenReader() {
    StoreOptions options;
    options.read_only = true;
    return OpenStore(options);
  }

  TestBackend backend_;
};

}  // namespace sparktrace::tracing::store
