"""The job_output tool: what a background command (started by run_command) printed since last asked; or stop it."""

from __future__ import annotations

from pydantic import Field

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.exec.jobs import JobTable


class JobOutputArgs(ToolArgs):
    job_id: str = Field(description="the id run_command gave when it started the background job")
    stop: bool = Field(False, description="stop the job (and all its processes) first")


class JobOutputTool(Tool[JobOutputArgs]):
    name = "job_output"
    kind = ToolKind.READ  # it only reads or ends processes that an approved run_command started
    same_result_again = False  # a job's output grows between two identical calls
    description = (
        "Show a background job's status and the output it printed since the last call "
        "(start and end when long); with stop=true, stop the job first."
    )
    Args = JobOutputArgs

    async def run(self, args: JobOutputArgs, ctx: ToolContext) -> ToolResult:
        if ctx.jobs is None:
            raise ToolError(
                "no background job has been started in this session; "
                "run_command with background=true starts one"
            )
        table = JobTable.of(ctx)
        job = table.get(args.job_id)
        if args.stop:
            await table.stop(job)
        output = job.take_new_output()
        lines = [job.status()]
        lines.append(output.rstrip("\n") if output.strip() else "(no new output since last read)")
        lines.append(f"full output: {job.running.capture.path}")
        return ToolResult(output="\n".join(lines), ok=True)
