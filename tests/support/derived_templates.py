"""Chat templates of invented formats, standing in for model families not yet released.

No family module knows them, so detection picks the parser derived from the template; each
writes its calls in one of the three shapes the derived parser reads.
"""

from __future__ import annotations

_TURNS = """
{%- for message in messages -%}
<|{{ message.role }}|>
{%- if message.reasoning_content -%}
<|thought|>{{ message.reasoning_content }}<|/thought|>
{%- endif -%}
{%- if message.tool_calls -%}
{{ CALLS }}
{%- else -%}
{{ message.content }}
{%- endif -%}
<|end|>
{%- endfor -%}
{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}
"""

# A tag per argument: <invoke tool="NAME"><arg key="K">V</arg></invoke>, in a <calls> run.
PER_ARG = _TURNS.replace(
    "{{ CALLS }}",
    """<calls>
{%- for call in message.tool_calls -%}
<invoke tool="{{ call.function.name }}">
{%- for k, v in call.function.arguments.items() -%}
<arg key="{{ k }}">{{ v if v is string else v | tojson }}</arg>
{%- endfor -%}
</invoke>
{%- endfor -%}
</calls>""",
)

# A tag carrying JSON arguments: <|fn|>NAME<|fn_args|>{...}<|fn_end|>.
TAG_JSON = _TURNS.replace(
    "{{ CALLS }}",
    """{%- for call in message.tool_calls -%}
<|fn|>{{ call.function.name }}<|fn_args|>{{ call.function.arguments | tojson }}<|fn_end|>
{%- endfor -%}""",
)

# A whole call as JSON, in an array: <|calls|>[{"tool": NAME, "input": {...}}]<|/calls|>.
JSON_CALL = _TURNS.replace(
    "{{ CALLS }}",
    """<|calls|>[
{%- for call in message.tool_calls -%}
{"tool": {{ call.function.name | tojson }}, "input": {{ call.function.arguments | tojson }}}
{%- if not loop.last %}, {% endif -%}
{%- endfor -%}
]<|/calls|>""",
)
