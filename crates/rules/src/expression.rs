//! Rule expressions: CEL over the facts of one request (spec 2.8).
//!
//! An expression is compiled once, when a rule is saved or loaded
//! ([`RuleExpression::compile`]): parsed by the `cel` crate, then checked
//! here, because that crate has no type checker: every name must be one of
//! the six `request.*` variables (or a comprehension's own), operators must
//! get operands of types they take, and the whole must be a boolean. A
//! problem is an [`ExpressionError`] with the line and column (1-based, in
//! characters) of the part at fault, so an admin sees where before saving.
//! The empty expression matches every request.
//!
//! Evaluation ([`RuleExpression::matches`]) is synchronous over one
//! [`RequestScope`], built once per request and shared by its rules.

use std::sync::{Arc, LazyLock};

use cel::common::ast::SourceInfo;
use cel::common::ast::{operators, CallExpr, EntryExpr, Expr, LiteralValue};
use cel::common::traits::Indexer;
use cel::common::types::{CelBool, CelInt, CelString, Type, MAP_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Context, Env, IdedExpr, Program, Value};

/// The variables a rule can read, with their types, as the console lists them.
pub const VARIABLES: &[(&str, &str)] = &[
    ("request.model", "string"),
    ("request.api_format", "string"),
    ("request.message_count", "int"),
    ("request.has_tools", "bool"),
    ("request.is_streaming", "bool"),
    ("request.content_length", "int"),
];

/// What rules see of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFacts<'a> {
    /// The model as the client named it.
    pub model: &'a str,
    /// `openai` or `anthropic`.
    pub api_format: &'static str,
    pub message_count: usize,
    pub has_tools: bool,
    pub is_streaming: bool,
    /// Characters of text the client sent (system prompt, messages, tool
    /// results).
    pub content_length: usize,
}

/// Why an expression was refused: the message and where (1-based).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ExpressionError"))]
pub struct ExpressionError {
    pub message: String,
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for ExpressionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// The standard CEL environment, built once (building it registers every
/// function; per request that would cost more than the evaluation).
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));

/// A compiled rule expression.
#[derive(Debug)]
pub struct RuleExpression {
    /// `None`: the empty expression, which matches everything.
    program: Option<Program>,
}

impl RuleExpression {
    /// Parse and check `source`.
    pub fn compile(source: &str) -> Result<Self, ExpressionError> {
        if source.trim().is_empty() {
            return Ok(RuleExpression { program: None });
        }
        if source.len() > MAX_SOURCE_BYTES {
            return Err(ExpressionError {
                message: format!("an expression has at most {MAX_SOURCE_BYTES} bytes"),
                line: 1,
                column: 1,
            });
        }
        let program = ENV.compile(source).map_err(|errors| {
            let first = errors.errors.first();
            let (line, column) = inside(
                source,
                first.map_or(1, |e| clamp_position(e.pos.0)),
                first.map_or(1, |e| clamp_position(e.pos.1 + 1)),
            );
            ExpressionError {
                message: first.map_or_else(|| "syntax error".to_owned(), |e| e.msg.clone()),
                line,
                column,
            }
        })?;
        {
            let checker = Checker {
                source,
                info: program.source_info(),
            };
            let root = program.expression();
            match checker.infer(root, &mut Vec::new())? {
                Ty::Bool | Ty::Dyn => {}
                other => {
                    return Err(checker.error(
                        root.id,
                        format!(
                            "a rule must give true or false; this gives {}",
                            other.name()
                        ),
                    ))
                }
            }
        }
        let expression = RuleExpression {
            program: Some(program),
        };
        Ok(expression)
    }

    /// Whether the expression is the empty one.
    pub fn is_empty(&self) -> bool {
        self.program.is_none()
    }

    /// Whether the request of `scope` matches; an evaluation error (the
    /// rule is then skipped) as text.
    pub fn matches(&self, scope: &RequestScope) -> Result<bool, String> {
        let Some(program) = &self.program else {
            return Ok(true);
        };
        match program.execute(&scope.context) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!("the expression gave {other:?}, not a boolean")),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Expressions longer than this are refused (a rule is a short condition).
const MAX_SOURCE_BYTES: usize = 4096;

fn clamp_position(p: isize) -> u32 {
    u32::try_from(p.max(1)).unwrap_or(u32::MAX)
}

/// A parser position kept inside `source`: at most its last line, and at
/// most one column past the end of that line (where the text ended too
/// early). The parser puts an unexpected end of input past it (found by
/// the `cel_rules` fuzz target: `request.model ==` was refused at column 18
/// of 16 characters).
fn inside(source: &str, line: u32, column: u32) -> (u32, u32) {
    let lines: Vec<&str> = source.split('\n').collect();
    let last = u32::try_from(lines.len()).unwrap_or(u32::MAX).max(1);
    let line = line.clamp(1, last);
    let width = lines
        .get(usize::try_from(line - 1).unwrap_or(0))
        .map_or(0, |l| l.chars().count());
    let end = u32::try_from(width).unwrap_or(u32::MAX).saturating_add(1);
    (line, column.clamp(1, end))
}

/// The evaluation context of one request: the `request` variable, built
/// once and read by every rule. Its fields are read in place (no map is
/// built, nothing is copied): a [`RequestVal`] answers each field lookup.
pub struct RequestScope<'a> {
    context: Context<'a, 'a>,
}

impl std::fmt::Debug for RequestScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestScope")
    }
}

impl<'a> RequestScope<'a> {
    pub fn new(facts: &RequestFacts<'a>) -> Self {
        let int = |n: usize| CelInt::from(i64::try_from(n).unwrap_or(i64::MAX));
        let request = RequestVal {
            model: CelString::from(facts.model),
            api_format: CelString::from(facts.api_format),
            message_count: int(facts.message_count),
            has_tools: CelBool::from(facts.has_tools),
            is_streaming: CelBool::from(facts.is_streaming),
            content_length: int(facts.content_length),
        };
        let mut context = Context::with_env(ENV.clone());
        context.add_variable_as_val("request", Box::new(request));
        RequestScope { context }
    }
}

/// The `request` variable: a map of the six facts, looked up by name.
#[derive(Debug, Clone)]
struct RequestVal<'a> {
    model: CelString<'a>,
    api_format: CelString<'a>,
    message_count: CelInt,
    has_tools: CelBool,
    is_streaming: CelBool,
    content_length: CelInt,
}

impl<'a> RequestVal<'a> {
    fn field(&self, name: &str) -> Option<&(dyn Val + 'a)> {
        Some(match name {
            "model" => &self.model,
            "api_format" => &self.api_format,
            "message_count" => &self.message_count,
            "has_tools" => &self.has_tools,
            "is_streaming" => &self.is_streaming,
            "content_length" => &self.content_length,
            _ => return None,
        })
    }
}

impl Val for RequestVal<'_> {
    fn get_type(&self) -> &Type {
        &MAP_TYPE
    }

    fn cel_type() -> &'static Type {
        &MAP_TYPE
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
    where
        Self: 'v,
    {
        Box::new(self.clone())
    }

    fn as_indexer<'b, 'w>(&'b self) -> Option<&'b (dyn Indexer + 'w)>
    where
        Self: 'w,
    {
        Some(self)
    }

    fn into_indexer<'w>(self: Box<Self>) -> Option<Box<dyn Indexer + 'w>>
    where
        Self: 'w,
    {
        Some(self)
    }
}

impl Indexer for RequestVal<'_> {
    fn get<'b, 'v>(&'b self, key: &dyn Val) -> Result<CowVal<'b, 'v>, cel::ExecutionError>
    where
        Self: 'v,
    {
        let name = key.downcast_ref::<CelString>().map_or("", |k| k.inner());
        self.field(name)
            .map(CowVal::Borrowed)
            .ok_or_else(|| cel::ExecutionError::no_such_key(name))
    }

    fn steal<'v>(self: Box<Self>, key: &dyn Val) -> Result<Box<dyn Val + 'v>, cel::ExecutionError>
    where
        Self: 'v,
    {
        self.get(key).map(CowVal::into_owned)
    }
}

/// The static types the checker tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    List,
    Map,
    /// The `request` variable itself.
    Request,
    /// Not known before run time.
    Dyn,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::String => "string",
            Ty::Bytes => "bytes",
            Ty::Null => "null",
            Ty::List => "list",
            Ty::Map | Ty::Request => "map",
            Ty::Dyn => "dyn",
        }
    }

    fn numeric(self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double)
    }

    /// Whether `==` between the two can be true (CEL compares numbers
    /// across kinds; `null` and run-time types compare with anything).
    fn comparable(self, other: Ty) -> bool {
        self == other
            || matches!(self, Ty::Dyn | Ty::Null)
            || matches!(other, Ty::Dyn | Ty::Null)
            || (self.numeric() && other.numeric())
    }
}

fn field_type(field: &str) -> Option<Ty> {
    VARIABLES
        .iter()
        .find(|(name, _)| name.strip_prefix("request.") == Some(field))
        .map(|(_, ty)| match *ty {
            "string" => Ty::String,
            "int" => Ty::Int,
            _ => Ty::Bool,
        })
}

struct Checker<'p> {
    source: &'p str,
    info: &'p SourceInfo,
}

impl Checker<'_> {
    /// The error at node `id`, with its line and column.
    fn error(&self, id: u64, message: String) -> ExpressionError {
        let start = self.info.offset_for(id).map_or(0, |(start, _)| start);
        // The parser counts offsets in characters.
        let before: String = self
            .source
            .chars()
            .take(usize::try_from(start).unwrap_or(usize::MAX))
            .collect();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        ExpressionError {
            message,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }

    /// The static type of `e`; `bound` holds the names comprehensions bind.
    fn infer(&self, e: &IdedExpr, bound: &mut Vec<String>) -> Result<Ty, ExpressionError> {
        Ok(match &e.expr {
            Expr::Unspecified => Ty::Dyn,
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Ident(name) if bound.iter().any(|b| b == name) => Ty::Dyn,
            Expr::Ident(name) if name == "request" => Ty::Request,
            Expr::Ident(name) => {
                return Err(self.error(
                    e.id,
                    format!("unknown name '{name}': a rule reads {}", variable_list()),
                ))
            }
            Expr::Select(select) => {
                let operand = self.infer(&select.operand, bound)?;
                if select.test {
                    Ty::Bool
                } else if operand == Ty::Request {
                    field_type(&select.field).ok_or_else(|| {
                        self.error(
                            e.id,
                            format!(
                                "request has no field '{}': a rule reads {}",
                                select.field,
                                variable_list()
                            ),
                        )
                    })?
                } else {
                    Ty::Dyn
                }
            }
            Expr::Call(call) => self.call(e.id, call, bound)?,
            Expr::Comprehension(c) => {
                self.infer(&c.iter_range, bound)?;
                self.infer(&c.accu_init, bound)?;
                let depth = bound.len();
                bound.push(c.iter_var.clone());
                bound.extend(c.iter_var2.clone());
                bound.push(c.accu_var.clone());
                let checked = [&c.loop_cond, &c.loop_step, &c.result]
                    .into_iter()
                    .try_for_each(|part| self.infer(part, bound).map(drop));
                bound.truncate(depth);
                checked?;
                Ty::Dyn
            }
            Expr::List(list) => {
                for element in &list.elements {
                    self.infer(element, bound)?;
                }
                Ty::List
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(m) = &entry.expr {
                        self.infer(&m.key, bound)?;
                        self.infer(&m.value, bound)?;
                    }
                }
                Ty::Map
            }
            Expr::Struct(_) => {
                return Err(self.error(e.id, "a rule cannot build messages".to_owned()))
            }
        })
    }

    fn call(
        &self,
        id: u64,
        call: &CallExpr,
        bound: &mut Vec<String>,
    ) -> Result<Ty, ExpressionError> {
        let target = match &call.target {
            Some(t) => Some(self.infer(t, bound)?),
            None => None,
        };
        let mut args = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            args.push(self.infer(arg, bound)?);
        }
        let want = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                let found: Vec<&str> = target.iter().chain(&args).map(|t| t.name()).collect();
                Err(self.error(id, format!("{what}; found {}", found.join(", "))))
            }
        };
        let is = |t: Ty, want: Ty| t == want || t == Ty::Dyn;
        Ok(match (call.func_name.as_str(), args.as_slice()) {
            (operators::LOGICAL_AND | operators::LOGICAL_OR, _) => {
                want(
                    args.iter().all(|&a| is(a, Ty::Bool)),
                    "'&&' and '||' take booleans",
                )?;
                Ty::Bool
            }
            (operators::LOGICAL_NOT | operators::NOT_STRICTLY_FALSE, _) => {
                want(args.iter().all(|&a| is(a, Ty::Bool)), "'!' takes a boolean")?;
                Ty::Bool
            }
            (operators::EQUALS | operators::NOT_EQUALS, [a, b]) => {
                want(a.comparable(*b), "'==' and '!=' compare values of one type")?;
                Ty::Bool
            }
            (
                operators::LESS
                | operators::LESS_EQUALS
                | operators::GREATER
                | operators::GREATER_EQUALS,
                [a, b],
            ) => {
                let ordered = |t: Ty| t.numeric() || matches!(t, Ty::String | Ty::Bytes | Ty::Bool);
                want(
                    (a.numeric() && b.numeric())
                        || (a == b && ordered(*a))
                        || *a == Ty::Dyn
                        || *b == Ty::Dyn,
                    "'<', '<=', '>' and '>=' compare numbers with numbers or values of one type",
                )?;
                Ty::Bool
            }
            (operators::ADD, [a, b]) => {
                want(
                    a == b && (a.numeric() || matches!(a, Ty::String | Ty::Bytes | Ty::List))
                        || *a == Ty::Dyn
                        || *b == Ty::Dyn,
                    "'+' adds numbers of one kind, strings or lists",
                )?;
                if *a == Ty::Dyn {
                    *b
                } else {
                    *a
                }
            }
            (
                operators::SUBSTRACT | operators::MULTIPLY | operators::DIVIDE | operators::MODULO,
                [a, b],
            ) => {
                want(
                    (a == b && a.numeric()) || *a == Ty::Dyn || *b == Ty::Dyn,
                    "arithmetic takes two numbers of one kind",
                )?;
                if *a == Ty::Dyn {
                    *b
                } else {
                    *a
                }
            }
            (operators::NEGATE, [a]) => {
                want(a.numeric() || *a == Ty::Dyn, "'-' negates a number")?;
                *a
            }
            (operators::CONDITIONAL, [c, a, b]) => {
                want(is(*c, Ty::Bool), "the condition of '?:' is a boolean")?;
                if a == b {
                    *a
                } else {
                    Ty::Dyn
                }
            }
            (operators::IN, [_, container]) => {
                want(
                    matches!(container, Ty::List | Ty::Map | Ty::Request | Ty::Dyn),
                    "'in' looks in a list or a map",
                )?;
                Ty::Bool
            }
            ("startsWith" | "endsWith" | "contains" | "matches", _) => {
                let on = target.or(args.first().copied());
                want(
                    on.is_some_and(|t| is(t, Ty::String))
                        && args
                            .iter()
                            .skip(usize::from(target.is_none()))
                            .all(|&a| is(a, Ty::String)),
                    &format!("'{}' works on strings", call.func_name),
                )?;
                Ty::Bool
            }
            (operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT, _) => Ty::Dyn,
            ("size", _) => Ty::Int,
            ("int", _) => Ty::Int,
            ("uint", _) => Ty::Uint,
            ("double", _) => Ty::Double,
            ("string", _) => Ty::String,
            ("bool", _) => Ty::Bool,
            (name, _) if KNOWN_FUNCTIONS.contains(&name) => Ty::Dyn,
            (name, _) => {
                return Err(self.error(
                    id,
                    format!(
                        "unknown function '{name}'; a rule can call {}",
                        KNOWN_FUNCTIONS.join(", ")
                    ),
                ))
            }
        })
    }
}

/// The functions of the standard library a rule may call (besides the
/// operators and the macros `has`, `all`, `exists`, `exists_one`, `map`,
/// `filter`, which the parser expands).
const KNOWN_FUNCTIONS: &[&str] = &[
    "size",
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "int",
    "uint",
    "double",
    "string",
    "bool",
    "bytes",
    "dyn",
    "type",
    "max",
    "min",
];

fn variable_list() -> String {
    VARIABLES
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "expression_tests.rs"]
mod tests;
