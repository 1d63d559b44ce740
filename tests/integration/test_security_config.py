"""Kafka's own server.properties with a SASL_SSL listener, as Kafka's security docs configure it,
serves unchanged; `kgc certs` makes what it needs; settings kgc cannot serve are one clear line."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from confluent_kafka import Producer

DATA = Path(__file__).parents[1] / "coordinator" / "data"
KGC = [sys.executable, "-m", "coordinator"]
ENV_CWD = Path(__file__).parents[2]


def kgc(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*KGC, *args], capture_output=True, text=True, timeout=timeout, cwd=ENV_CWD)


def test_kgc_certs_and_a_kafka_sasl_ssl_server_properties(tmp_path):
    made = kgc("certs", str(tmp_path / "certs"))
    assert made.returncode == 0 and "ssl.keystore.location=" in made.stdout
    certs = tmp_path / "certs"
    kafka = (DATA / "kafka-kraft-server.properties").read_text()
    # Kafka's docs (security_sasl_brokerconfig, security_ssl): the only client listener is SASL_SSL.
    kafka = kafka.replace(
        "listeners=PLAINTEXT://:9092,CONTROLLER://:9093", "listeners=SASL_SSL://:9092,CONTROLLER://:9093"
    )
    kafka = kafka.replace("inter.broker.listener.name=PLAINTEXT", "inter.broker.listener.name=SASL_SSL")
    kafka = kafka.replace(
        "advertised.listeners=PLAINTEXT://localhost:9092", "advertised.listeners=SASL_SSL://localhost:9092"
    )
    kafka += (
        "sasl.enabled.mechanisms=PLAIN\n"
        "sasl.mechanism.inter.broker.protocol=PLAIN\n"
        "listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
        'required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";\n'
        "ssl.keystore.type=PEM\n"
        f"ssl.keystore.location={certs / 'server.pem'}\n"
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={certs / 'ca.pem'}\n"
    )
    props = tmp_path / "server.properties"
    props.write_text(kafka)
    proc = subprocess.Popen(
        [
            *KGC,
            "serve",
            "--config",
            str(props),
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--data-dir",
            str(tmp_path / "d"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ENV_CWD,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("kgc: serving bootstrap=127.0.0.1:"), first
        bootstrap = first.split("bootstrap=")[1].split()[0]
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.username": "alice",
                "sasl.password": "alice-secret",
                "ssl.ca.location": str(certs / "ca.pem"),
            }
        )
        producer.produce("orders", b"hello")  # auto-created
        assert producer.flush(20) == 0
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "serving SASL_SSL -> port=9092 host=localhost (not serving CONTROLLER)" in err
    assert "secret" not in out + err  # no password from the JAAS config in any note or log line


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgc"), result.stderr
    return lines[0]


def test_what_kgc_cannot_serve_is_one_clear_line(tmp_path):
    base = ["serve", "--port", "0", "--data-dir", str(tmp_path / "d"), "--set", "listeners=SASL_PLAINTEXT://:0"]
    assert "kgc serves the SASL mechanisms" in one_line(kgc(*base))  # Kafka's default mechanism, GSSAPI
    assert "No such file or directory" in one_line(kgc("certs", "/proc/no/such/dir"))


def problem(tmp_path, **settings) -> str:
    """The ConfigError `kgc serve` would print for these settings (checked in process)."""
    from coordinator.config import Config, ConfigError
    from coordinator.security.setup import open_security

    try:
        open_security(Config({k.replace("_", "."): v for k, v in settings.items()}), tmp_path, lambda: 0)
    except ConfigError as exc:
        return str(exc)
    raise AssertionError("accepted")


def test_unservable_security_settings_are_named(tmp_path):
    sasl = {"listeners": "SASL_PLAINTEXT://:0"}
    assert "PLAIN needs users" in problem(tmp_path, **sasl, sasl_enabled_mechanisms="PLAIN")
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="very-secret"'  # no ';'
    text = problem(tmp_path, **sasl, sasl_enabled_mechanisms="PLAIN", sasl_jaas_config=jaas)
    assert "must end with `;`" in text and "very-secret" not in text
    assert "needs a keystore" in problem(tmp_path, listeners="SSL://:0")
    assert "StandardAuthorizer" in problem(tmp_path, authorizer_class_name="com.example.Mine")
    two = "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093"
    assert "overlap" in problem(
        tmp_path, listeners=two, port=9092, cluster_brokers=2, sasl_enabled_mechanisms="OAUTHBEARER"
    )
    assert "not GSSAPI" in problem(tmp_path, **sasl, sasl_enabled_mechanisms="PLAIN,GSSAPI")
