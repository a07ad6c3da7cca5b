import { useState, type DragEvent } from 'react';
import { Link } from 'react-router-dom';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { contentTypeFromName, fitContentType, type TaskType } from '@mediaproof/sdk';
import { client, errorMessage, formatBytes, noticeSignedOut } from '../api';
import { StatusBadge, TERMINAL, useTaskTypes } from '../components';

interface Pending {
  key: string;
  file: File;
  contentType: string;
  taskTypeId: number | null;
  progress: number | null;
  jobId: string | null;
  error: string | null;
}

/** The formats a task type takes as the analysed file (its `original` slot). */
const originalSlot = (taskType: TaskType) => taskType.slots.find((slot) => slot.name === 'original')!;

/**
 * The type to declare for this file to this task type, as the SDK's analyze() fits it: a `.webm`
 * voice note, which browsers call video/webm, goes to an audio task as audio/webm.
 */
const typeFor = (taskType: TaskType, contentType: string) => fitContentType(contentType, originalSlot(taskType).mimeTypes);
const takes = (taskType: TaskType, contentType: string) => originalSlot(taskType).mimeTypes.includes(typeFor(taskType, contentType));

/** Why a task type cannot take this file, or null when it can. */
function refusal(taskType: TaskType, contentType: string, size: number): string | null {
  if (!taskType.available) return 'no detector in this build yet';
  if (!takes(taskType, contentType)) return `takes ${originalSlot(taskType).formats.join(', ')}`;
  if (size > taskType.maxFileBytes) return `files up to ${formatBytes(taskType.maxFileBytes)}`;
  return null;
}

/** PUT with upload progress (fetch cannot report it), to the job's pre-signed URL. */
function uploadWithProgress(url: string, file: File, contentType: string, onProgress: (share: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', url);
    request.setRequestHeader('content-type', contentType);
    request.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    request.onload = () => {
      if (request.status >= 200 && request.status < 300) return resolve();
      let message = `upload answered ${request.status}`;
      try {
        message = (JSON.parse(request.responseText) as { message?: string }).message ?? message;
      } catch {
        // not JSON (an S3 XML error): keep the status
      }
      reject(new Error(message));
    };
    request.onerror = () => reject(new Error('the upload did not reach the service'));
    request.send(file);
  });
}

export function AnalyzePage() {
  const taskTypes = useTaskTypes();
  const queryClient = useQueryClient();
  const [files, setFiles] = useState<Pending[]>([]);
  const [dragging, setDragging] = useState(false);
  const update = (key: string, patch: Partial<Pending>) => setFiles((all) => all.map((f) => (f.key === key ? { ...f, ...patch } : f)));

  const add = (list: FileList | null) => {
    if (!list) return;
    // Browsers name some types their own way (audio/x-wav): the service's names win.
    const known = new Set(taskTypes.data?.flatMap((t) => t.mimeTypes));
    const added = [...list].map((file, i) => {
      const contentType = known.has(file.type) ? file.type : (contentTypeFromName(file.name) ?? (file.type || 'application/octet-stream'));
      const firstFit = taskTypes.data?.find((t) => !refusal(t, contentType, file.size));
      return { key: `${Date.now()}-${i}-${file.name}`, file, contentType, taskTypeId: firstFit?.id ?? null, progress: null, jobId: null, error: null };
    });
    setFiles((all) => [...all, ...added]);
  };

  const run = async (item: Pending) => {
    const taskType = taskTypes.data?.find((t) => t.id === item.taskTypeId);
    if (!taskType) return;
    const contentType = typeFor(taskType, item.contentType);
    update(item.key, { progress: 0, error: null });
    try {
      const created = await client.jobs.create({
        taskType: taskType.id,
        inputs: [{ slotName: 'original', fileName: item.file.name, contentType, sizeBytes: item.file.size }],
      });
      update(item.key, { jobId: created.jobId });
      await uploadWithProgress(created.inputs[0]!.uploadUrl, item.file, contentType, (share) => update(item.key, { progress: share }));
      await client.jobs.finalize(created.jobId);
      update(item.key, { progress: 1 });
      void queryClient.invalidateQueries({ queryKey: ['jobs'] });
      void queryClient.invalidateQueries({ queryKey: ['credits'] });
    } catch (error) {
      noticeSignedOut(error);
      // A job created before the failure stays in the list (and costs nothing until finalized).
      update(item.key, { error: errorMessage(error), progress: null, jobId: null });
    }
  };

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    add(event.dataTransfer.files);
  };

  return (
    <section aria-labelledby="analyze-title">
      <h1 id="analyze-title">Analyze</h1>
      <div
        className={`dropzone ${dragging ? 'dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <p>Drop images, videos, audio or documents here, or</p>
        <label className="button">
          Choose files
          <input type="file" multiple className="visually-hidden" onChange={(e) => add(e.target.files)} data-testid="file-input" />
        </label>
        <p className="muted small">Each file becomes one job, charged like an API job when it is finalized.</p>
      </div>
      {files.map((item) => (
        <div key={item.key} className="card upload" aria-label={`File ${item.file.name}`}>
          <div className="upload-head">
            <strong>{item.file.name}</strong>
            <span className="muted">{item.contentType} · {formatBytes(item.file.size)}</span>
          </div>
          {item.jobId === null ? (
            <TaskTypeChoice item={item} taskTypes={taskTypes.data ?? []} onChoose={(id) => update(item.key, { taskTypeId: id })} onRun={() => void run(item)} />
          ) : (
            <JobProgress item={item} />
          )}
          {item.error && <p className="error" role="alert">{item.error}</p>}
        </div>
      ))}
    </section>
  );
}

function TaskTypeChoice({ item, taskTypes, onChoose, onRun }: { item: Pending; taskTypes: TaskType[]; onChoose(id: number): void; onRun(): void }) {
  const usable = taskTypes.filter((t) => !refusal(t, item.contentType, item.file.size));
  const name = `task-${item.key}`;
  return (
    <>
      {usable.length === 0 && (
        <p className="error" role="alert">No task type takes this file: {taskTypes.some((t) => takes(t, item.contentType)) ? 'it is over every size limit or no detector is built for it' : `${item.contentType} is not a format the service analyses`}.</p>
      )}
      <fieldset className="task-choice">
        <legend>Task type</legend>
        {taskTypes
          .filter((t) => takes(t, item.contentType))
          .map((t) => {
            const why = refusal(t, item.contentType, item.file.size);
            return (
              <label key={t.id} className={why ? 'disabled' : ''}>
                <input type="radio" name={name} value={t.id} checked={item.taskTypeId === t.id} disabled={Boolean(why)} onChange={() => onChoose(t.id)} />
                <span>
                  <strong>{t.slug}</strong> <span className="muted">{why ? `(${why})` : t.purpose}</span>
                </span>
              </label>
            );
          })}
      </fieldset>
      <button type="button" className="primary" disabled={item.taskTypeId === null || item.progress !== null} onClick={onRun}>
        Upload and analyze
      </button>
    </>
  );
}

function JobProgress({ item }: { item: Pending }) {
  const job = useQuery({
    queryKey: ['job', item.jobId],
    queryFn: () => client.jobs.retrieve(item.jobId!),
    enabled: item.progress === 1,
    refetchInterval: (query) => (query.state.data && TERMINAL.has(query.state.data.status) ? false : 1000),
  });
  return (
    <div className="job-progress">
      {item.progress !== null && item.progress < 1 && (
        <label>
          Uploading <progress value={item.progress} max={1} /> {Math.round(item.progress * 100)}%
        </label>
      )}
      {job.data && (
        <p role="status" aria-live="polite">
          <StatusBadge status={job.data.status} /> {job.data.status === 'failed' && job.data.errorMessage}
        </p>
      )}
      <Link to={`/jobs/${item.jobId}`}>{job.data && TERMINAL.has(job.data.status) ? 'Open the result →' : 'Open the job →'}</Link>
    </div>
  );
}
