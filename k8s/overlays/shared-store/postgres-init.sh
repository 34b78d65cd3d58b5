#!/bin/bash
# The roles and the database of the shared trace store. The postgres image runs this once, as the
# superuser over its local socket, when the data directory is empty (docker-entrypoint-initdb.d).
# It is idempotent: run it again to apply changed passwords (docs/shared-store.md, "Passwords"):
#   kubectl exec sts/sparktrace-postgres -- /docker-entrypoint-initdb.d/10-sparktrace-roles.sh
#
#   sparktrace         the proxies: owns the database, creates and migrates the schema
#   sparktrace_reader  sparktrace ui: SELECT on every table sparktrace creates, now or in a later
#                      migration (ALTER DEFAULT PRIVILEGES), and read-only transactions
# The passwords come from the environment (the Secret sparktrace-store), never from arguments.
set -euo pipefail

for variable in STORE_WRITER_PASSWORD STORE_READER_PASSWORD; do
  case "${!variable:-}" in
    "" | REPLACE_ME*)
      echo "sparktrace: $variable is empty or the placeholder of passwords.env.example;" \
           "write passwords.env (docs/shared-store.md)" >&2
      exit 1 ;;
  esac
done

psql --no-psqlrc -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" <<'SQL'
\getenv writer_password STORE_WRITER_PASSWORD
\getenv reader_password STORE_READER_PASSWORD

SELECT 'CREATE ROLE sparktrace LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sparktrace') \gexec
SELECT 'CREATE ROLE sparktrace_reader LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'sparktrace_reader') \gexec
ALTER ROLE sparktrace PASSWORD :'writer_password';
ALTER ROLE sparktrace_reader PASSWORD :'reader_password';
-- Whatever a client asks for, the reader's transactions are read-only.
ALTER ROLE sparktrace_reader SET default_transaction_read_only = on;

SELECT 'CREATE DATABASE sparktrace OWNER sparktrace' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'sparktrace') \gexec
REVOKE ALL ON DATABASE sparktrace FROM PUBLIC;
GRANT CONNECT ON DATABASE sparktrace TO sparktrace_reader;

\connect sparktrace
-- The schema is the proxies' (their migrations create it): whatever sparktrace creates later, in
-- whichever schema, the reader may read.
ALTER DEFAULT PRIVILEGES FOR ROLE sparktrace GRANT USAGE ON SCHEMAS TO sparktrace_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE sparktrace GRANT SELECT ON TABLES TO sparktrace_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE sparktrace GRANT SELECT ON SEQUENCES TO sparktrace_reader;
-- And what exists already (when this runs again on a database the proxies have migrated).
SELECT format('GRANT USAGE ON SCHEMA %I TO sparktrace_reader', nspname),
       format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO sparktrace_reader', nspname)
  FROM pg_namespace WHERE nspname = 'public' OR nspowner = 'sparktrace'::regrole \gexec
SQL
