"""The scenarios: what each one sends, where (directly to the simulator, through
the gateway, through LiteLLM), and what a correct answer must contain.

Every answer is 400 characters of text, streamed as 20 chunks of 20
characters where the scenario streams; the tool scenario answers one tool
call whose arguments arrive in 3 fragments. The simulator picks the answer
from a `sim:` directive line in the last user message, which the gateway
passes through unchanged, so direct and relayed requests ask for the same
answer.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BODIES = os.path.join(os.path.dirname(HERE), "bodies")

TEXT = "text len=400 chunk=20"
TOOLS = "tools n=1 fragments=3"
# 20 chunks one second apart: a stream that stays open for 20 s.
SLOW = "text len=400 chunk=20 interval=1s"

PRIMARY_MODEL_OPENAI = "claude-sonnet-4.5"
PRIMARY_MODEL_ANTHROPIC = "claude-sonnet-4-5"
CUSTOM_MODEL = "bench-model"

WEATHER_TOOL_OPENAI = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string"}},
                       "required": ["city"]},
    },
}
WEATHER_TOOL_ANTHROPIC = {
    "name": "get_weather",
    "description": "Current weather of a city.",
    "input_schema": WEATHER_TOOL_OPENAI["function"]["parameters"],
}


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def prompt(directive):
    return f"Hello\nsim: {directive}"


def openai_body(model, directive, stream, tools=False):
    body = {"model": model, "messages": [{"role": "user", "content": prompt(directive)}]}
    if stream:
        body["stream"] = True
    if tools:
        body["tools"] = [WEATHER_TOOL_OPENAI]
    return compact(body)


def anthropic_body(model, directive, stream, tools=False):
    body = {"model": model, "max_tokens": 1024,
            "messages": [{"role": "user", "content": prompt(directive)}]}
    if stream:
        body["stream"] = True
    if tools:
        body["tools"] = [WEATHER_TOOL_ANTHROPIC]
    return compact(body)


def primary_body(directive):
    """The upstream body the gateway itself sends for a one-message chat
    (captured from it, with the default fake-reasoning prompt), so the
    simulator does the same work direct and relayed."""
    with open(os.path.join(BODIES, "primary.json"), encoding="utf-8") as f:
        template = json.load(f)
    msg = template["conversationState"]["currentMessage"]["userInputMessage"]
    msg["content"] = msg["content"].replace("__DIRECTIVE__", directive)
    return compact(template)


class Scenario:
    """One row group of the table.

    direct / gateway / litellm: (kind, path, body, expect) or None, where kind
    names the auth headers to send and `expect` lists byte strings a correct
    answer contains. `direct_key` lets scenarios that send the simulator the
    very same request share one direct measurement."""

    def __init__(self, name, label, provider, stream, direct, direct_key, gateway,
                 litellm=None, gateway_env=None):
        self.name, self.label, self.provider, self.stream = name, label, provider, stream
        self.direct, self.direct_key, self.gateway, self.litellm = (
            direct, direct_key, gateway, litellm)
        # Variables the gateway needs for this scenario only; a value
        # starting with `{sim}` is a path below the simulator's root.
        self.gateway_env = gateway_env or {}


SSE_OPENAI = [b"data: ", b"[DONE]"]
SSE_ANTHROPIC = [b"event: message_start", b"event: message_stop"]
JSON_OPENAI = [b'"choices"', b'"content"']
JSON_ANTHROPIC = [b'"type":"message"', b'"text"']
EVENT_STREAM = [b"assistantResponseEvent"]


def primary_scenarios():
    direct = ("primary", "/generateAssistantResponse", primary_body(TEXT), EVENT_STREAM)
    out = []
    for fmt, stream in (("openai", False), ("openai", True),
                        ("anthropic", False), ("anthropic", True)):
        if fmt == "openai":
            gw = ("gateway_openai", "/v1/chat/completions",
                  openai_body(PRIMARY_MODEL_OPENAI, TEXT, stream),
                  SSE_OPENAI if stream else JSON_OPENAI)
            label = "chat completions"
        else:
            gw = ("gateway_anthropic", "/v1/messages",
                  anthropic_body(PRIMARY_MODEL_ANTHROPIC, TEXT, stream),
                  SSE_ANTHROPIC if stream else JSON_ANTHROPIC)
            label = "messages"
        mode = "stream 20 chunks" if stream else "non-streaming"
        out.append(Scenario(
            name=f"primary-{fmt}-{'stream' if stream else 'json'}",
            label=f"primary, {label}, {mode}",
            provider="primary", stream=stream,
            direct=direct, direct_key="primary-text",
            gateway=gw))
    return out


def custom_scenarios(custom_prefix):
    """OpenAI clients to `custom` (pass-through) and Anthropic clients to
    `custom` (cross-format, streaming, one tool call). `custom_prefix` is the
    simulator's OpenAI-compatible root path, e.g. `/custom/v1`."""
    chat = f"{custom_prefix}/chat/completions"
    gw_model = f"custom/{CUSTOM_MODEL}"
    out = []
    for stream in (False, True):
        out.append(Scenario(
            name=f"custom-openai-{'stream' if stream else 'json'}",
            label=f"custom, chat completions (pass-through), "
                  f"{'stream 20 chunks' if stream else 'non-streaming'}",
            provider="custom", stream=stream,
            direct=("custom", chat, openai_body(CUSTOM_MODEL, TEXT, stream),
                    SSE_OPENAI if stream else JSON_OPENAI),
            direct_key=f"custom-text-{stream}",
            gateway=("gateway_openai", "/v1/chat/completions",
                     openai_body(gw_model, TEXT, stream),
                     SSE_OPENAI if stream else JSON_OPENAI),
            litellm=("litellm", "/v1/chat/completions",
                     openai_body(CUSTOM_MODEL, TEXT, stream),
                     SSE_OPENAI if stream else JSON_OPENAI)))
    out.append(Scenario(
        name="custom-anthropic-tools-stream",
        label="custom, messages client (cross-format), stream with a tool call",
        provider="custom", stream=True,
        direct=("custom", chat, openai_body(CUSTOM_MODEL, TOOLS, True, tools=True),
                SSE_OPENAI + [b'"tool_calls"']),
        direct_key="custom-tools-stream",
        gateway=("gateway_anthropic", "/v1/messages",
                 anthropic_body(gw_model, TOOLS, True, tools=True),
                 SSE_ANTHROPIC + [b'"tool_use"', b"input_json_delta"]),
        litellm=("litellm", "/v1/messages",
                 anthropic_body(CUSTOM_MODEL, TOOLS, True, tools=True),
                 [b"tool_use", b"input_json_delta"])))
    return out


def vendor_scenarios():
    """Counted by `bench/instructions.sh` only (no direct or LiteLLM run):
    an OpenAI client to `messages_vendor` (cross-format the other way:
    the provider's messages stream read into chat-completions chunks),
    streaming, with one tool call. The vendor is configured for this
    scenario alone: with it, `primary`'s model names would go to it."""
    model = "messages_vendor/claude-sonnet-4-5-20250929"
    return [Scenario(
        name="vendor-openai-tools-stream",
        label="messages_vendor, chat completions client (cross-format), stream with a tool call",
        provider="messages_vendor", stream=True, direct=None, direct_key=None,
        gateway=("gateway_openai", "/v1/chat/completions",
                 openai_body(model, TOOLS, True, tools=True),
                 SSE_OPENAI + [b'"tool_calls"']),
        gateway_env={"MESSAGES_VENDOR_BASE_URL": "{sim}/messages_vendor",
                     "MESSAGES_VENDOR_API_KEY": "sk-ant-sim"})]


def open_streams_body():
    """1,000 open streams: OpenAI-format streaming through primary, slow answers."""
    return ("gateway_openai", "/v1/chat/completions",
            openai_body(PRIMARY_MODEL_OPENAI, SLOW, True))
