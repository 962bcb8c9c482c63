"""The peers' configuration files, rendered from their templates in
scripts/peers/ (nginx, h2o, Tomcat's server.xml), and the label that says a
target's protocol."""
import copy
import xml.etree.ElementTree as ET


def fill(template, **values):
    """A peer's configuration template with each @KEY@ replaced by its value."""
    for key, value in values.items():
        template = template.replace(f"@{key}@", str(value))
    return template


def protocol_label(cert, http2=False):
    """What a target's label says of its HTTP/2 and TLS: " +h2c" (in clear),
    " +h2 +tls ECDSA P-256", " +tls ECDSA P-256", or nothing."""
    h2 = (" +h2" if cert else " +h2c") if http2 else ""
    return h2 + (f" +tls {cert.label}" if cert else "")


def _tls_values(cert):
    if not cert:
        return {}
    # nginx's TLS 1.3 suites (OpenSSL's SSL_CONF_cmd; nginx 1.19.4 and later).
    suites = f"ssl_conf_command Ciphersuites {cert.suites};" if cert.suites else ""
    return {"CERT": cert.cert, "KEY": cert.key, "CIPHERSUITES": suites}


def render_openssl_conf(suites):
    """An OpenSSL configuration (OPENSSL_CONF) whose system_default section
    makes every SSL_CTX of the process offer the TLS 1.3 suites `suites`
    alone: h2o 2.2.5 has no option of its own for them. It replaces the
    system's openssl.cnf for that process only."""
    return ("# Written by scripts/bench --tls for one server's process.\n"
            "openssl_conf = openssl_init\n\n[openssl_init]\nssl_conf = ssl_configuration\n\n"
            "[ssl_configuration]\nsystem_default = tls_defaults\n\n"
            f"[tls_defaults]\nCiphersuites = {suites}\n")


def render_nginx_conf(template, workers, port, prefix, tls=None, http2=False):
    """nginx.conf.in with its @WORKERS@, @PORT@ and @PREFIX@ filled in,
    nginx-tls.conf.in's @CERT@, @KEY@ and @CIPHERSUITES@ (an
    ssl_conf_command, or nothing) from `tls` (a benchlib.tls.Certificate),
    and @HTTP2@ (the listener's http2 with `http2`)."""
    return fill(template, WORKERS=workers, PORT=port, PREFIX=prefix, HTTP2=" http2" if http2 else "",
                **_tls_values(tls))


def render_h2o_conf(template, port, threads, prefix, user, tls=None, http2=False):
    """h2o.conf.in with its @PORT@, @THREADS@, @PREFIX@ and @USER@ filled in,
    and @H2C@ (ON with `http2`: h2c by prior knowledge), and
    h2o-tls.conf.in's @CERT@ and @KEY@ from `tls`."""
    return fill(template, PORT=port, THREADS=threads, PREFIX=prefix, USER=user, H2C="ON" if http2 else "OFF",
                **_tls_values(tls))


def render_tomcat_server_xml(template, port, threads):
    """tomcat_hello/server.xml.in with its @PORT@ and @THREADS@ filled in."""
    return fill(template, PORT=port, THREADS=threads)


def tomcat_h2_server_xml(server_xml, cert=None, key=None, tls_port=None):
    """tomcat_hello's server.xml with Spring Boot's server.http2.enabled:
    Tomcat's HTTP/2 upgrade protocol on the connector (h2c, by prior
    knowledge or Upgrade). With `cert` and `key` (PEM files), TLS too (h2
    by ALPN): on the connector itself, or with `tls_port` on a copy of it
    on that port beside the one in clear, as Spring Boot builds it when
    server.ssl is set."""
    root = ET.fromstring(server_xml.encode())
    service = root.find("Service")
    connector = service.find("Connector")
    ET.SubElement(connector, "UpgradeProtocol", className="org.apache.coyote.http2.Http2Protocol")
    if cert:
        tls = copy.deepcopy(connector) if tls_port else connector
        tls.attrib.update(SSLEnabled="true", scheme="https", secure="true")
        if tls_port:
            tls.set("port", str(tls_port))
            service.insert(list(service).index(connector) + 1, tls)
        host = ET.SubElement(tls, "SSLHostConfig")
        ET.SubElement(host, "Certificate", certificateFile=cert, certificateKeyFile=key)
    return ET.tostring(root, encoding="unicode") + "\n"
