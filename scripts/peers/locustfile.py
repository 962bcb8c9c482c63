# Article 002's locust user; scripts/bench sets LOCUST_PATH to the target's path.
import os

from locust import HttpUser, task

PATH = os.environ.get("LOCUST_PATH", "/index")


class UserBehavior(HttpUser):
    @task(1)
    def stress_index(self):
        self.client.get(PATH)
