import type { Metadata } from "next";
import { Suspense } from "react";
import { requireReviewerPage } from "@/lib/dashboard/auth";
import { countPresetOverrides, listRules, ruleToolNames, tryTools } from "@/lib/dashboard/policy";
import { Card, EmptyState, PageHeader } from "../_components/page-parts";
import { PageSkeleton } from "../_components/states";
import { createRuleAction } from "./actions";
import { RuleForm } from "./_components/rule-form";
import { RuleItem } from "./_components/rule-item";
import { TryIt } from "./_components/try-it";
import { PresetCard } from "./_components/preset-card";
import { workspacePreset } from "@/lib/policy/preset-store";
import { currentWorkspace } from "@/lib/workspace/register-workspace";
import { GrantList } from "./_components/grant-list";
import { listGrants } from "@/lib/approvals/grants";

export const metadata: Metadata = { title: "Policy" };

/** Policy rules in evaluation order (add, edit, reorder, disable) and the "try it" box. */
export default async function PolicyPage() {
  await requireReviewerPage("/policy");
  return (
    <Suspense fallback={<PageSkeleton />}>
      <Policy />
    </Suspense>
  );
}

async function Policy() {
  const workspace = await currentWorkspace();
  const [rules, grants, preset, agentOverrides] = await Promise.all([
    listRules(),
    listGrants(),
    workspacePreset(workspace.id),
    countPresetOverrides(),
  ]);
  const tools = ruleToolNames();
  return (
    <>
      <PageHeader
        title="Policy"
        description="A supervision preset sets how much is asked; the rules below apply on top of it. Among the enabled rules that match a call, deny beats ask beats allow, and the first of them in this order is named as the deciding rule; a call no rule matches asks. A shell command is split into its simple commands and allowed only when every one is."
      />
      <div className="space-y-4">
        <Card title="Supervision preset">
          <PresetCard current={preset} agentOverrides={agentOverrides} />
        </Card>
        <Card title="Try it">
          <TryIt tools={tryTools()} />
        </Card>
        <Card title={`Rules (${rules.length})`}>
          {rules.length === 0 ? (
            <EmptyState title="No rules">Every call asks for a reviewer until a rule allows it.</EmptyState>
          ) : (
            <ol className="space-y-1.5" data-testid="rules">
              {rules.map((rule, i) => (
                <RuleItem key={rule.id} rule={rule} position={i + 1} last={i === rules.length - 1} tools={tools} />
              ))}
            </ol>
          )}
        </Card>
        <Card title={`Grants from approvals (${grants.filter((g) => g.state === "active").length} active)`}>
          <GrantList grants={grants} />
        </Card>
        <Card title="Add a rule">
          <RuleForm action={createRuleAction} tools={tools} submitLabel="Add rule" testId="add-rule" />
        </Card>
      </div>
    </>
  );
}
