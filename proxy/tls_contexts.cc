#include "proxy/tls_contexts.h"

#include <cstring>
#include <memory>

#include <openssl/err.h>
#include <openssl/pem.h>

namespace sparktrace::proxy {
namespace {

// ALPN wire format: length-prefixed protocol names.
constexpr unsigned char kAlpnH2[] = {2, 'h', '2'};

using BioPtr = std::unique_ptr<BIO, CFree<BIO_free>>;
using X509Ptr = std::unique_ptr<X509, CFree<X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, CFree<EVP_PKEY_free>>;

std::string OpenSslError(std::string_view what) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  char text[256] = {};
  if (code != 0) ERR_error_string_n(code, text, sizeof text);
  return std::string(what) + (code != 0 ? std::string(": ") + text : std::string());
}

BioPtr MemoryBio(const std::string& pem) { return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

int SelectH2(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length, const unsigned char* offered,
             unsigned int offered_length, void* /*arg*/) {
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_length, kAlpnH2, sizeof kAlpnH2, offered, offered_length) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;  // a gRPC client always offers h2
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

Result<SslContextPtr> NewServerTlsContext(const std::string& cert_pem, const std::string& key_pem) {
  SslContextPtr context(SSL_CTX_new(TLS_server_method()));
  if (!context) return Error{ErrorCode::kInternal, OpenSslError("cannot create a TLS context")};
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(context.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);

  const BioPtr certs = MemoryBio(cert_pem);
  X509Ptr leaf(PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr));
  if (!leaf || SSL_CTX_use_certificate(context.get(), leaf.get()) != 1) {
    return Error{ErrorCode::kInvalidArgument, OpenSslError("--tls-cert: not a PEM certificate")};
  }
  while (X509* intermediate = PEM_read_bio_X509(certs.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add_extra_chain_cert(context.get(), intermediate);  // the context owns it now
  }
  ERR_clear_error();  // the loop ends on a "no start line" error

  const BioPtr key_bio = MemoryBio(key_pem);
  const KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key || SSL_CTX_use_PrivateKey(context.get(), key.get()) != 1 || SSL_CTX_check_private_key(context.get()) != 1) {
    return Error{ErrorCode::kInvalidArgument, OpenSslError("--tls-key: not the PEM key of --tls-cert")};
  }
  SSL_CTX_set_alpn_select_cb(context.get(), SelectH2, nullptr);
  return context;
}

Result<SslContextPtr> NewClientTlsContext(const std::string& ca_pem) {
  SslContextPtr context(SSL_CTX_new(TLS_client_method()));
  if (!context) return Error{ErrorCode::kInternal, OpenSslError("cannot create a TLS context")};
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  if (ca_pem.empty()) {
    SSL_CTX_set_default_verify_paths(context.get());
  } else {
    const BioPtr bio = MemoryBio(ca_pem);
    X509_STORE* store = SSL_CTX_get_cert_store(context.get());
    int added = 0;
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      added += X509_STORE_add_cert(store, ca);
      X509_free(ca);
    }
    ERR_clear_error();
    if (added == 0) return Error{ErrorCode::kInvalidArgument, "--upstream-ca: no PEM certificate in it"};
  }
  SSL_CTX_set_alpn_protos(context.get(), kAlpnH2, sizeof kAlpnH2);
  return context;
}

}  // namespace sparktrace::proxy
