-- AlterTable
ALTER TABLE "PolicyRule" ADD COLUMN     "createdBy" TEXT,
ADD COLUMN     "createdFromCallId" TEXT,
ADD COLUMN     "expiresAt" TIMESTAMP(3),
ADD COLUMN     "revokedAt" TIMESTAMP(3),
ADD COLUMN     "revokedBy" TEXT,
ADD COLUMN     "sessionId" TEXT,
ADD COLUMN     "workspaceId" TEXT;

-- AlterTable
ALTER TABLE "ToolCall" ADD COLUMN     "reviewedAt" TIMESTAMP(3),
ADD COLUMN     "reviewedBy" TEXT;

-- CreateIndex
CREATE INDEX "PolicyRule_source_expiresAt_idx" ON "PolicyRule"("source", "expiresAt");

-- CreateIndex
CREATE INDEX "ToolCall_sessionId_reviewedAt_idx" ON "ToolCall"("sessionId", "reviewedAt");
