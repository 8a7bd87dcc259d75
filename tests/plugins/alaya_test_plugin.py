"""A plugin for the hook tests, loaded through `ALAYA_PLUGINS=alaya_test_plugin`: a distiller
that always fails, an extra session-start section and an extra introspect step."""

from openclaw_alaya.hookspecs import hookimpl


class BrokenDistiller:
    name = "broken"

    def distill(self, session, start=0):
        raise RuntimeError("the LLM is down")


@hookimpl
def register_distillers(register):
    register("broken", lambda config: BrokenDistiller())


@hookimpl
def introspect(memory):
    from openclaw_alaya.maintenance.introspect import Step

    return Step("test-step", lambda memory: {"hello": "world"}, order=50)
