"""The LLM providers evallint recognises, in one place: SDK roots and call shapes, LangChain
chat models, the words of the text prefilter. The front-end's prefilters and the interpreter
read these tables; adding a provider is an edit here."""

from __future__ import annotations

from evallint.pyflow.ir import PythonFacts

LLM_SDKS = ("anthropic", "openai", "litellm", "mistralai")
ANTHROPIC_METHODS = ("messages.create", "messages.stream", "messages.parse",
                     "messages.batches.create", "completions.create")
OPENAI_METHODS = ("chat.completions.create", "chat.completions.parse", "chat.completions.stream",
                  "responses.create", "responses.parse", "responses.stream",
                  # openai < 1.0: ``openai.ChatCompletion.create(model=..., messages=...)``
                  "ChatCompletion.create", "ChatCompletion.acreate")
# mistralai: ``MistralClient().chat(...)`` (before 1.0), ``Mistral().chat.complete(...)``; so
# generic a method name counts only in a module importing mistralai, with ``model=``
MISTRAL_METHODS = ("chat", "chat_stream", "chat.complete", "chat.stream", "chat.complete_async",
                   "chat.stream_async")
# Evaluation frameworks whose evaluator object runs an LLM judge: the constructor, the class
# that carries its model, and the methods that judge
FRAMEWORK_EVALUATORS = {"uptrain.EvalLLM": "uptrain"}
# Agent and evaluation frameworks modelled in :mod:`evallint.pyflow.frameworks` (Gemini's
# ``google.generativeai`` / ``google.genai`` are matched by their full module name)
FRAMEWORK_ROOTS = ("agents", "dspy", "pydantic_ai", "pydantic_evals", "autogen_agentchat",
                   "autogen", "ag2", "textgrad", "mcp_agent", "crewai")
GOOGLE_LLM_MODULES = ("google.generativeai", "google.genai")
FRAMEWORK_SETTINGS = ("Settings",)
# pydantic-evals' documented default judge model, changed by ``set_default_judge_model``
PYDANTIC_EVALS_DEFAULT = "openai:gpt-4o"
# The frameworks whose configure call (:func:`evallint.pyflow.frameworks.is_configure`) in one
# file sets the model of all the others.
AMBIENT_FRAMEWORKS = ("dspy", "textgrad", "pydantic_evals")
FRAMEWORK_EVAL_METHODS = frozenset({"evaluate", "evaluate_experiments", "aevaluate"})
LITELLM_FUNCS = {"litellm.completion", "litellm.acompletion", "litellm.text_completion",
                 "litellm.batch_completion", "litellm.responses"}
NON_CONTENT = {"model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k",
               "tools", "tool_choice", "thinking", "reasoning_effort", "reasoning",
               "response_format", "output_format", "text_format", "stream", "timeout", "n",
               "seed", "stop", "stop_sequences", "metadata", "extra_headers", "extra_body",
               "betas", "service_tier", "parallel_tool_calls", "api_key", "base_url",
               "max_retries", "num_retries", "user", "store", "text"}
STRUCTURED = {"response_format", "output_format", "text_format"}
# LangChain chat models: constructors (from a ``langchain*`` package), the methods that run
# one, and the methods that return the same model with options bound
CHAT_CLASSES = {"ChatOpenAI", "ChatAnthropic", "ChatOllama", "ChatGoogleGenerativeAI",
                "AzureChatOpenAI", "ChatLiteLLM", "ChatVertexAI", "ChatBedrock",
                "ChatBedrockConverse", "ChatMistralAI", "ChatGroq", "ChatDeepSeek",
                "ChatFireworks", "ChatTogether", "ChatXAI", "ChatCohere", "init_chat_model"}
CHAT_INVOKE = {"invoke", "ainvoke", "stream", "astream", "batch", "abatch"}
CHAT_BIND = {"with_structured_output", "bind_tools", "bind", "with_config", "with_retry",
             "with_fallbacks"}

_SDK_SUFFIXES = tuple("." + m for m in (*ANTHROPIC_METHODS, *OPENAI_METHODS))

# Words that any LLM call, evaluator or model constant evallint can reason about contains.
# Lower-cased substring tests: an IGNORECASE regex alternation is ten times slower.
PREFILTER_WORDS = (
    "anthropic", "openai", "litellm", "messages.create", "judge", "evaluat", "grader",
    "grading", "rubric", "claude-", "gpt-", "gemini-", "llm", "critique", "critic_", "_critic",
    "langchain", "langgraph", "mistral", "dspy", "from agents", "import agents", "autogen",
    "pydantic_ai", "pydantic_evals", "genai", "generativeai", "completions.create",
    "responses.create", "generate_content", "textgrad", "crewai",
)
# A module that imports one of these (or a ``langchain*`` package) can call an LLM.
SDK_ROOTS = frozenset((*LLM_SDKS, *(n.split(".")[0] for n in FRAMEWORK_EVALUATORS),
                       *FRAMEWORK_ROOTS))
# Call text that shows an SDK call even when the client comes from elsewhere.
SDK_CALL_TEXT = (".messages.create", ".messages.stream", ".messages.parse", "batches.create",
                 ".completions.create", ".completions.parse", ".responses.create",
                 ".responses.parse", ".responses.stream", ".ChatCompletion.create")


def chat_ctor(qualified: str) -> bool:
    """``langchain_openai.ChatOpenAI``, ``langchain.chat_models.init_chat_model``."""
    return qualified.split(".")[0].startswith("langchain") and (
        qualified.rsplit(".", 1)[-1] in CHAT_CLASSES)


def mistral_call(func: str, has_model: bool, imports: dict[str, str]) -> bool:
    """``client.chat(model=...)`` in a module that imports mistralai."""
    if not has_model or not any(v.split(".")[0] == "mistralai" for v in imports.values()):
        return False
    dotted = "." + func
    return any(dotted.endswith("." + m) for m in MISTRAL_METHODS)


def framework_evaluator(qualified: str) -> str | None:
    """``uptrain.EvalLLM`` -> ``uptrain``: an evaluation framework's evaluator class."""
    for name, framework in FRAMEWORK_EVALUATORS.items():
        if qualified == name or (qualified.split(".")[0] == name.split(".")[0]
                                 and qualified.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1]):
            return framework
    return None


def _inside(module: str, package: str) -> bool:
    """Is ``module`` part of ``package`` itself? A framework's own source (``dspy/predict/``)
    builds its objects from its own modules: it is not a program that uses the framework."""
    return module == package or module.startswith(package + ".")


def has_sdk_call(facts: PythonFacts) -> bool:
    """Could this module call an LLM SDK? (the interpreter decides for sure) A callee and
    whether the call names a model decide it: each pair is tested once per module."""
    seen: set[tuple[str, bool]] = set()
    for fn in facts.functions.values():
        for c in fn.calls:
            shape = (c.func, c.kw("model") is not None)
            if shape in seen:
                continue
            seen.add(shape)
            root = c.func.split(".")[0]
            target = facts.imports.get(root, "")
            if chat_ctor(f"{target}{c.func[len(root):]}"):
                return True
            dotted = "." + c.func
            if dotted.endswith(_SDK_SUFFIXES):
                return True
            if mistral_call(c.func, shape[1], facts.imports):
                return True
            if framework_evaluator(f"{target}{c.func[len(root):]}"):
                return True
            if target.split(".")[0] == "litellm":
                return True
            if target.startswith(GOOGLE_LLM_MODULES):
                return True
    return False


def framework_roots(facts: PythonFacts) -> tuple[str, ...]:
    """The modelled frameworks (``dspy``, ``agents`` ...) whose objects this module calls.
    Kept apart from :func:`has_sdk_call`: the project analysis counts them only when the
    project does not hold a package of that name (the framework's own repository, or a
    project whose ``agents/`` package is its own code)."""
    roots: list[str] = []
    seen: set[str] = set()
    for fn in facts.functions.values():
        for c in fn.calls:
            root = c.func.split(".")[0]
            if root in seen:
                continue
            seen.add(root)
            fw = facts.imports.get(root, "").split(".")[0]
            if fw in FRAMEWORK_ROOTS and not _inside(facts.module, fw):
                roots.append(fw)
    return tuple(dict.fromkeys(roots))
