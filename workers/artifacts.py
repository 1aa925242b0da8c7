"""The raw artifacts of a Run, by the names users ask for (the API's artifact endpoints and the web page's
download buttons)."""

from __future__ import annotations

ARTIFACTS = {
    "analysis.json": lambda run: run.analysis.model_dump_json(indent=2) if run.analysis else None,
    "prompt.txt": lambda run: run.prompt,
    "llm.txt": lambda run: run.llm_output,
    "ir.lp": lambda run: run.ir,
    "checked_ir.lp": lambda run: run.checked_ir.text if run.checked_ir else None,
    "materialized.lp": lambda run: run.materialized.atoms if run.materialized else None,
    "task.pddl": lambda run: run.task_pddl.text if run.task_pddl else None,
    "domain.pddl": lambda run: run.domain_pddl,
    "plan.txt": lambda run: run.plan.text if run.plan else None,
    "plan.json": lambda run: run.plan.model_dump_json(indent=2) if run.plan else None,
}
