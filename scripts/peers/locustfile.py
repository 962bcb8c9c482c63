# Article 002's locust user; scripts/bench sets LOCUST_PATH to the target's path.
import os

import locust.runners
from locust import HttpUser, task

PATH = os.environ.get("LOCUST_PATH", "/index")
# Over https://, the certificate is checked against LOCUST_CA_FILE if set
# (hello-NAME --tls-write-cert FILE), and not at all otherwise: a
# benchmark target's certificate is usually made at start (curl's -k).
CA_FILE = os.environ.get("LOCUST_CA_FILE") or False

# Debian's python3-locust (2.12.1-1) reports an empty version, and a master
# drops a worker that says "" in its client_ready as "old (pre 2.0)": the
# distributed mode (scripts/bench --locust-workers) would never start. Say a
# version when there is none; both the master and its workers load this file.
if not locust.runners.__version__:
    locust.runners.__version__ = "2.12.1-debian"


class UserBehavior(HttpUser):
    def on_start(self):
        self.client.verify = CA_FILE

    @task(1)
    def stress_index(self):
        self.client.get(PATH)
