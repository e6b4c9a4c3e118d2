-- AlterTable
ALTER TABLE "ToolCall" ADD COLUMN     "traceparent" TEXT;
