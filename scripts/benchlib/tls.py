"""The certificates and the client side of `scripts/bench --tls`.

One certificate per key type, made once per run in a temp dir with the
openssl CLI, self-signed for localhost and 127.0.0.1; every target of the
run serves the same one. The clients verify nothing: none of them is
measured, and the servers' work is the same either way."""
import os
import shutil
import ssl
import subprocess
from typing import NamedTuple

# The key types, in the order the run starts them: the cells' variant, the
# report's name and openssl's arguments. The targets judge ECDSA P-256;
# RSA 2048 is reported beside it.
KEYS = {"ecdsa": ("ECDSA P-256", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]),
        "rsa": ("RSA 2048", ["-newkey", "rsa:2048"])}
JUDGED = "ecdsa"
# The like-for-like variant: the judged certificate, every server made to
# negotiate this TLS 1.3 suite alone by its own configuration (a persona's
# --tls-ciphersuites, nginx's ssl_conf_command, h2o's OPENSSL_CONF).
FORCED = "aes256"
FORCED_SUITE = "TLS_AES_256_GCM_SHA384"
SUBJECT = "/CN=localhost"
ALT_NAMES = "subjectAltName=DNS:localhost,IP:127.0.0.1"
# A run lasts minutes; a week leaves room for --report and a slow clock.
DAYS = 7


class CertificateError(Exception):
    """The certificates could not be made; the message says why."""


class Certificate(NamedTuple):
    """One key type's certificate and private key, PEM files, and the TLS
    1.3 suites a server serving it must negotiate ("": its own choice)."""
    kind: str  # a key of KEYS
    cert: str
    key: str
    suites: str = ""

    @property
    def label(self):
        return KEYS[self.kind][0] + (f", {self.suites} only" if self.suites else "")


def forced(cert, suites=FORCED_SUITE):
    """`cert` served with the TLS 1.3 suites `suites` alone."""
    return cert._replace(suites=suites)


def certificate_command(kind, cert, key, openssl="openssl"):
    """The argv that makes a self-signed certificate of key type `kind`."""
    return ([openssl, "req", "-x509"] + KEYS[kind][1]
            + ["-nodes", "-keyout", key, "-out", cert, "-days", str(DAYS), "-subj", SUBJECT, "-addext", ALT_NAMES])


def make_certificates(directory, openssl="openssl", kinds=tuple(KEYS)):
    """The certificate of each key type of `kinds` (default: every one) in
    `directory`: {kind: Certificate}. Raises CertificateError."""
    if shutil.which(openssl) is None:
        raise CertificateError(f"{openssl} is not installed (Debian's openssl)")
    made = {}
    for kind in kinds:
        cert = Certificate(kind, *(os.path.join(directory, f"{kind}-{part}.pem") for part in ("cert", "key")))
        try:
            done = subprocess.run(certificate_command(kind, cert.cert, cert.key, openssl), capture_output=True,
                                  text=True, timeout=60)
        except subprocess.TimeoutExpired:
            raise CertificateError(f"openssl did not make the {cert.label} certificate within 60 s")
        if done.returncode:
            tail = (done.stderr.strip().splitlines() or [f"status {done.returncode}"])[-1]
            raise CertificateError(f"openssl could not make the {cert.label} certificate: {tail}")
        made[kind] = cert
    return made


def server_flags(cert):
    """The flags that make a persona serve HTTPS with `cert`."""
    suites = ["--tls-ciphersuites", cert.suites] if cert.suites else []
    return ["--tls", "--tls-cert", cert.cert, "--tls-key", cert.key] + suites


def client_context():
    """A client's TLS context that verifies nothing (the certificates are
    self-signed) and negotiates what the server offers: TLS 1.3 here."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
