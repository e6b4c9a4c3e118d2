"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { approveCall, rejectCall } from "@/lib/approvals/queue";
import { describeDecision, previewEditedWrite, type DecisionOutcome, type EditPreview } from "@/lib/dashboard/approvals";
import { requireReviewerPage } from "@/lib/dashboard/auth";

const CallId = z.string().min(1).max(100);
const Reason = z.string().max(2000);
const Content = z.string();

/** Approves a pending call (it runs now, once) as the signed-in reviewer. */
export async function approveAction(callId: string): Promise<DecisionOutcome> {
  const id = CallId.parse(callId);
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const outcome = describeDecision(id, await approveCall(id, reviewer.login), "Approved");
  revalidatePath("/approvals");
  return outcome;
}

/** Approves a pending write_file with the reviewer's edited content (the log keeps both). */
export async function approveEditedAction(callId: string, content: string): Promise<DecisionOutcome> {
  const id = CallId.parse(callId);
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const outcome = describeDecision(id, await approveCall(id, reviewer.login, { content: Content.parse(content) }), "Approved");
  revalidatePath("/approvals");
  return outcome;
}

/** Rejects a pending call with a reason the agent receives (error 602). */
export async function rejectAction(callId: string, reason: string): Promise<DecisionOutcome> {
  const id = CallId.parse(callId);
  const reviewer = await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  const outcome = describeDecision(id, await rejectCall(id, reviewer.login, Reason.parse(reason).trim()), "Rejected");
  revalidatePath("/approvals");
  return outcome;
}

/** The diff a pending write_file would make with edited content (nothing is written). */
export async function previewEditAction(callId: string, content: string): Promise<EditPreview> {
  const id = CallId.parse(callId);
  await requireReviewerPage(`/approvals?call=${encodeURIComponent(id)}`);
  return previewEditedWrite(id, Content.parse(content));
}
