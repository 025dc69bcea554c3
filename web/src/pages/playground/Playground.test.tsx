import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import Playground from './Playground';

function sse(chunks: string[]): Response {
  const enc = new TextEncoder();
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        if (i < chunks.length) c.enqueue(enc.encode(chunks[i++]!));
        else c.close();
      },
    }),
    { headers: { 'Content-Type': 'text/event-stream' } },
  );
}

describe('playground', () => {
  it('streams a chat-completions answer with the pasted key, never the session', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/models': { body: { models: [{ id: 'claude-sonnet-4.5', provider: 'primary', display_name: null, context_window: null, max_output_tokens: null }] } },
      'POST /v1/chat/completions': () =>
        sse([
          'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel',
          'lo"},"finish_reason":null}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n',
          'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\ndata: [DONE]\n\n',
        ]),
    });
    renderAt(<Playground />, '/playground');
    await userEvent.type(screen.getByLabelText('API key'), 'sk-test-key');
    await waitFor(() => expect(screen.getByLabelText('Model')).toHaveValue('claude-sonnet-4.5'));
    await userEvent.type(screen.getByLabelText('Message', { selector: 'textarea' }), 'hi');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect(await screen.findByText('Hello there')).toBeInTheDocument();
    const call = calls.find((c) => c.path === '/v1/chat/completions')!;
    expect(call.headers.get('Authorization')).toBe('Bearer sk-test-key');
    expect(call.headers.get('X-CSRF-Token')).toBeNull();
    expect(call.credentials).toBe('omit');
    expect(call.body).toMatchObject({ model: 'claude-sonnet-4.5', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(screen.getByRole('tab', { name: 'Raw events (4)' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('tab', { name: 'Usage' }));
    expect(screen.getByText('Input tokens').nextElementSibling).toHaveTextContent('3');
    await userEvent.click(screen.getByRole('tab', { name: 'curl' }));
    expect(screen.getByText(/\$GATEWAY_API_KEY/)).toBeInTheDocument();
    expect(screen.queryByText(/sk-test-key/)).toBeNull();
  });

  it('shows the gateway refusing the request with its message', async () => {
    mockFetch({
      'POST /v1/messages': { status: 403, body: { error: { message: 'model is disabled', type: 'model_disabled' } } },
    });
    renderAt(<Playground />, '/playground');
    await userEvent.clear(screen.getByLabelText('API key'));
    await userEvent.type(screen.getByLabelText('API key'), 'sk-k');
    await userEvent.click(screen.getByLabelText('Messages'));
    await userEvent.type(await screen.findByLabelText('Model'), 'claude-x');
    await userEvent.type(screen.getByLabelText('Message', { selector: 'textarea' }), 'hi');
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect(await screen.findByText('403 model_disabled: model is disabled')).toBeInTheDocument();
  });

  it('says what is missing before sending', async () => {
    mockFetch({});
    renderAt(<Playground />, '/playground');
    // The key of the earlier test is still in this tab's memory, as it would be after moving between pages.
    expect(screen.getByLabelText('API key')).not.toHaveValue('');
    await userEvent.clear(screen.getByLabelText('API key'));
    await userEvent.click(screen.getByRole('button', { name: 'Send' }));
    expect(screen.getByText('To send: paste an API key or create one; choose a model; write a message.')).toBeInTheDocument();
  });
});
