#!/bin/sh
# Writes admin-token.env beside this script: the admin token of k8s/base and of every overlay built on
# it (the Secret sparktrace-admin-token, key token, that kustomization.yaml generates from the file).
# Never committed (.gitignore). 24 random bytes, base64url without padding: 32 of A-Z a-z 0-9 - _,
# a token the proxy accepts (16 or more of A-Z a-z 0-9 . _ ~ -).
#
#   sh k8s/base/generate-admin-token.sh            # once, before the first `kubectl apply -k`
#   sh k8s/base/generate-admin-token.sh --rotate   # a new token: re-apply, restart, update Airflow's copy
#
# The token is never printed. docs/threat-model.md: what it protects.
set -eu
dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
file="$dir/admin-token.env"
case "${1:-}" in
  "") if [ -e "$file" ]; then
        echo "$file exists: kept (pass --rotate for a new token)" >&2
        exit 0
      fi ;;
  --rotate) ;;
  *) echo "usage: $0 [--rotate]" >&2; exit 2 ;;
esac
token=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
case "$token" in
  ????????????????????????????????) ;;
  *) echo "could not generate a token (head, base64 and tr from coreutils are needed)" >&2; exit 1 ;;
esac
umask 077
printf 'token=%s\n' "$token" > "$file.tmp"
mv "$file.tmp" "$file"
echo "wrote $file (the Secret sparktrace-admin-token, key token)"
echo "next: kubectl apply -k <your kustomization>; for the Airflow workers, the same Secret in Airflow's namespace:"
echo "  kubectl -n <airflow namespace> create secret generic sparktrace-admin-token --from-env-file=$file"
