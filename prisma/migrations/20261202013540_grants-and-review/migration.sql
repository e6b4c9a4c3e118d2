-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN "createdBy" TEXT;
ALTER TABLE "PolicyRule" ADD COLUMN "createdFromCallId" TEXT;
ALTER TABLE "PolicyRule" ADD COLUMN "expiresAt" DATETIME;
ALTER TABLE "PolicyRule" ADD COLUMN "revokedAt" DATETIME;
ALTER TABLE "PolicyRule" ADD COLUMN "revokedBy" TEXT;
ALTER TABLE "PolicyRule" ADD COLUMN "sessionId" TEXT;
ALTER TABLE "PolicyRule" ADD COLUMN "workspaceId" TEXT;

-- AlterTable
ALTER TABLE "ToolCall" ADD COLUMN "reviewedAt" DATETIME;
ALTER TABLE "ToolCall" ADD COLUMN "reviewedBy" TEXT;

-- CreateIndex
CREATE INDEX "PolicyRule_source_expiresAt_idx" ON "PolicyRule"("source", "expiresAt");

-- CreateIndex
CREATE INDEX "ToolCall_sessionId_reviewedAt_idx" ON "ToolCall"("sessionId", "reviewedAt");
