"""The scratch copy of the committed tree: unpacked outside the
repository, configured (Release, ccache if present), built by target, and
its GoogleTest binaries run with a time limit."""

import os
import shutil
import subprocess
from pathlib import Path

from .mutant_list import MutantError


def run(cmd, log, cwd=None, env=None, timeout=None):
    """Runs `cmd`, its output appended to `log`. Returns the exit status,
    or None if it ran past `timeout` (its process group is then killed)."""
    with open(log, "a") as out:
        out.write(f"\n$ {' '.join(str(c) for c in cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            out.write(f"\n(killed after {timeout} s)\n")
            return None
        except BaseException:  # interrupted: the command's own session goes too
            os.killpg(proc.pid, 9)
            proc.wait()
            raise


class ScratchTree:
    """`scratch`/tree (the sources), `scratch`/tree/build (as build/ in the
    repository), `scratch`/mutants.log."""

    def __init__(self, repository, scratch, jobs):
        self.repository = Path(repository)
        self.scratch = Path(scratch)
        self.src = self.scratch / "tree"
        self.build = self.src / "build"
        self.log = self.scratch / "mutants.log"
        self.jobs = jobs
        self.env = dict(os.environ)
        # Paths relative to the build directory, so that ccache hits across
        # scratch trees, and from the repository's own build/ when its
        # CCACHE_BASEDIR holds it (the compiler sees ../common either way).
        self.env["CCACHE_BASEDIR"] = str(self.src)
        self.binaries = {}

    def unpack(self, rev):
        """The tree of commit `rev`, every file dated now (so that a kept
        build directory rebuilds whatever differs)."""
        if self.src.exists():
            for entry in self.src.iterdir():
                if entry == self.build:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        self.src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(self.repository), "archive", "--format=tar", rev],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if archive.returncode != 0:
            raise MutantError(f"git archive {rev}: {archive.stderr.decode().strip()}")
        untar = subprocess.run(["tar", "-x", "-m", "-C", str(self.src)], input=archive.stdout)
        if untar.returncode != 0:
            raise MutantError("tar could not unpack the archive")
        # llhttp's sources as scripts/setup unpacked them (.deps/, which git
        # archive leaves out), where CMakeLists.txt looks for them.
        deps = self.repository / ".deps"
        if deps.is_dir():
            (self.src / ".deps").symlink_to(deps.resolve())

    def configure(self):
        if (self.build / "CMakeCache.txt").exists():
            cmd = ["cmake", "-S", str(self.src), "-B", str(self.build)]
        else:
            cmd = ["cmake", "-S", str(self.src), "-B", str(self.build),
                   "-DCMAKE_BUILD_TYPE=Release"]
            if shutil.which("ninja"):
                cmd += ["-G", "Ninja"]
            if shutil.which("ccache"):
                cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                        "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        if run(cmd, self.log, env=self.env) != 0:
            raise MutantError(f"cmake failed: see {self.log}")

    def build_targets(self, targets):
        """True if `targets` built."""
        cmd = ["cmake", "--build", str(self.build), "-j", str(self.jobs), "--target", *targets]
        return run(cmd, self.log, env=self.env) == 0

    def binary(self, target):
        if target not in self.binaries:
            found = [p for p in self.build.rglob(target) if p.is_file() and os.access(p, os.X_OK)]
            if not found:
                raise MutantError(f"no executable {target} in {self.build}")
            self.binaries[target] = found[0]
        return self.binaries[target]

    def test(self, command, timeout):
        """Runs one TestCommand: "pass", "fail" or "timeout"."""
        cmd = [str(self.binary(command.binary)), f"--gtest_filter={command.gtest_filter}",
               "--gtest_brief=1"]
        rc = run(cmd, self.log, cwd=self.build, env=self.env, timeout=timeout)
        return "timeout" if rc is None else "pass" if rc == 0 else "fail"

    def count_tests(self, command):
        """How many tests the command's filter selects."""
        cmd = [str(self.binary(command.binary)), f"--gtest_filter={command.gtest_filter}",
               "--gtest_list_tests"]
        out = subprocess.run(cmd, cwd=self.build, stdout=subprocess.PIPE, text=True, env=self.env)
        return sum(1 for line in out.stdout.splitlines() if line.startswith("  "))
