"""cmake --install honours its prefix (docs/packaging.md, "Installing by
hand"): into a temporary DESTDIR, with --prefix /opt/hf nothing is written
outside /opt/hf, the systemd unit and the defaults file are under it and
name its paths, every doc of the source is installed and every link of the
installed docs resolves (scripts/check-links); with --prefix /usr, the
package's layout: the unit in /lib/systemd/system and the defaults file in
/etc/default, byte for byte the sources.

    install_test.py BUILD_DIR     (run by ctest as installed_docs)
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UNIT = "hello-family@.service"


def install(build, destdir, prefix):
    """cmake --install of build into destdir under prefix; every file it wrote, relative to destdir."""
    done = subprocess.run(["cmake", "--install", build, "--prefix", prefix], env=dict(os.environ, DESTDIR=destdir),
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: cmake --install --prefix {prefix}: exit {done.returncode}\n{done.stderr}")
    return sorted(os.path.relpath(os.path.join(folder, name), destdir)
                  for folder, _dirs, names in os.walk(destdir) for name in names)


def source_docs():
    docs = ["README.md"]
    for folder, _dirs, names in os.walk(os.path.join(ROOT, "docs")):
        docs += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names if n.endswith(".md")]
    return docs


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_opt(build, failures):
    """--prefix /opt/hf: everything under it, the unit's paths, the docs and their links."""
    with tempfile.TemporaryDirectory(prefix="hello-install-") as dest:
        files = install(build, dest, "/opt/hf")
        outside = [f for f in files if not f.startswith("opt/hf/")]
        if outside:
            failures.append(f"--prefix /opt/hf wrote outside it: {', '.join(outside[:5])}")
        prefix = os.path.join(dest, "opt", "hf")
        unit = os.path.join(prefix, "lib", "systemd", "system", UNIT)
        defaults = os.path.join(prefix, "etc", "default", "hello-family")
        for path in (unit, defaults):
            if not os.path.isfile(path):
                failures.append(f"--prefix /opt/hf: {os.path.relpath(path, dest)} not installed")
        if os.path.isfile(unit):
            lines = read(unit).splitlines()
            for wanted in ("ExecStart=/opt/hf/bin/hello-%i $HELLO_ARGS",
                           "EnvironmentFile=-/opt/hf/etc/default/hello-family",
                           "EnvironmentFile=-/opt/hf/etc/hello-family/%i.conf"):
                if wanted not in lines:
                    failures.append(f"--prefix /opt/hf: the unit has no line {wanted!r}")
            stray = [line for line in lines if ("/usr/" in line or "/etc/" in line) and "/opt/hf/" not in line]
            if stray:
                failures.append(f"--prefix /opt/hf: the unit still names /usr or /etc: {stray[0]!r}")
        doc_dir = os.path.join(prefix, "share", "doc", "hello-family")
        for doc in source_docs():
            if not os.path.isfile(os.path.join(doc_dir, doc)):
                failures.append(f"--prefix /opt/hf: {doc} not installed in share/doc/hello-family")
        checked = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "check-links"), doc_dir],
                                 capture_output=True, text=True, timeout=120)
        print(checked.stderr.strip())
        if checked.returncode != 0:
            failures.append(f"the installed docs have broken links:\n{checked.stdout}")


def check_usr(build, failures):
    """--prefix /usr: the package's layout, and the unit and defaults as the sources."""
    with tempfile.TemporaryDirectory(prefix="hello-install-") as dest:
        files = install(build, dest, "/usr")
        allowed = ("usr/", f"lib/systemd/system/{UNIT}", "etc/default/hello-family")
        outside = [f for f in files if not f.startswith(allowed)]
        if outside:
            failures.append(f"--prefix /usr wrote outside /usr, the unit and the defaults: {', '.join(outside[:5])}")
        for installed, source in ((f"lib/systemd/system/{UNIT}", f"packaging/systemd/{UNIT}"),
                                  ("etc/default/hello-family", "packaging/default/hello-family")):
            path = os.path.join(dest, installed)
            if not os.path.isfile(path):
                failures.append(f"--prefix /usr: /{installed} not installed")
            elif read(path) != read(os.path.join(ROOT, source)):
                failures.append(f"--prefix /usr: /{installed} differs from {source}")
        for binary in ("hello-sanic", "hello-floor"):
            if f"usr/bin/{binary}" not in files:
                failures.append(f"--prefix /usr: /usr/bin/{binary} not installed")


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    failures = []
    check_opt(argv[0], failures)
    check_usr(argv[0], failures)
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("ok: --prefix /opt/hf stays under it with working doc links; --prefix /usr has the package's layout")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
