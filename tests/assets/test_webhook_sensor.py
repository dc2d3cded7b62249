"""Change webhooks on Dagster: the sensor launches the delivery job while events are due, the job
runs one bounded pass, and a home another process holds is left to it (a skip that says why)."""

from __future__ import annotations

import dagster as dg

from assets.definitions import defs
from assets.maintenance import webhook_delivery
from assets.resources import MemoryHomeResource
from assets.schedules import webhook_delivery_sensor
from memory_core import Identity, Memory
from tests.holder import held
from tests.webhook_receiver import Receiver


def _tick(resource: MemoryHomeResource):
    return webhook_delivery_sensor(dg.build_sensor_context(resources={"memory_home": resource}))


def test_the_sensor_launches_the_delivery_job_while_events_are_due(tmp_path):
    home = tmp_path / "home"
    receiver = Receiver().start()
    try:
        with Memory.open(home) as memory:
            memory.webhook_register("acme", receiver.url)
            memory.for_run(Identity(tenant="acme", user="ana")).set("city", "Lisbon")
        resource = MemoryHomeResource(home=str(home))
        request = _tick(resource)
        assert isinstance(request, dg.RunRequest) and request.tags["webhook_events_due"] == "1"
        assert defs.resolve_sensor_def("webhook_delivery_sensor").job.name == "webhook_delivery_job"
        done = dg.materialize([webhook_delivery], resources={"memory_home": resource})
        assert done.success
        assert done.asset_materializations_for_node("webhook_delivery")[0].metadata["delivered"].value == 1
        assert [r.event["type"] for r in receiver.delivered()] == ["memory.written"]
        assert _tick(resource).skip_message == "no webhook event is due"
        with held(home):  # another process holds the home: the sensor looks again next tick
            assert "busy" in _tick(resource).skip_message
        assert "no memory home" in _tick(MemoryHomeResource(home=str(tmp_path / "nowhere"))).skip_message
    finally:
        receiver.stop()
