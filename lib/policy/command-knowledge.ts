import path from "node:path";
import { SHELL_NAMES, type Argv, type ArgvToken } from "@/lib/policy/command-pattern";
import { analyzeSedScript } from "@/lib/policy/sed-script";
import { has, parseArgs, resolveLong, values, type Option, type OptionSpec, type ParsedArgs } from "@/lib/policy/options";

/**
 * What the policy knows about individual programs, independent of any rule:
 * - wrappers that run another command (`env`, `timeout 5`, `nice`, `xargs`, `sudo`, `sh -c`…),
 *   so the command they run is classified too (field case C20/C21, "prefix words");
 * - file effects of common programs: which operands they read and write (`tee`, `cp`, `sed -i`,
 *   `sed w`, `dd of=`, `git --output`, `find -delete`…, C23), and options that run other
 *   programs (`find -exec`, `sed e`, `rg --pre`, `git -c`…), which make a command not read-only
 *   whatever rule allows it;
 * - commands that print the environment (`printenv`, `env`, `/proc/*\/environ`, C21-9).
 * Option syntax follows each program's GNU manual; GNU tools accept options after operands and
 * unambiguous prefixes of long options (`--out` for `--output`), and so does this reader.
 */

/** A decision the built-in knowledge forces, whatever the rules say. */
export interface Floor {
  decision: "ask" | "deny";
  reason: string;
}

/** The effects of one command layer. */
export interface Effects {
  /** Path operands the command reads (expanded values, relative to its working directory). */
  reads: string[];
  /** Path operands the command creates, changes or deletes. */
  writes: string[];
  floors: Floor[];
  /** Shell source the command runs (`bash -c STRING`, `eval ARGS`): parsed and classified too. null = not static. */
  scripts: Array<{ via: string; source: string | null }>;
  /**
   * For git: the directory it runs in, relative to the command's working directory ("" = that
   * directory; absolute after `-C /x`), or null when not known statically. The caller checks
   * which repository git finds from there (lib/policy/git-repo.ts). Absent for other programs.
   */
  gitDir?: string | null;
  /**
   * Directories the command reads recursively (`grep -r`, `rg`, `git grep`): every file under
   * them that the reader does not skip is read, so the caller walks them (bounded) and checks
   * each file against the sensitive-path rules. Absent when the command walks nothing.
   */
  walks?: Walk[];
}

/** A recursive read: where it starts and which files the reader skips on its own. */
export interface Walk {
  /** Starting point, relative to the command's working directory (or absolute). */
  root: string;
  /** The program, for reasons (`grep -r`, `rg`, `git grep`). */
  via: string;
  /** Names starting with "." are skipped below the starting point (ripgrep without --hidden). */
  skipHidden: boolean;
  /** Directory names skipped (git grep: `.git`; grep --exclude-dir globs). */
  skipDirs: string[];
  /** File-name globs skipped (grep --exclude), and globs at least one of which a file must match (grep --include). */
  excludeFiles: string[];
  includeFiles: string[];
}

/** One command in a chain of wrappers: `timeout 5 xargs grep x` is timeout → xargs → grep. */
export interface Layer {
  argv: Argv;
  /** Looked through: its decision comes from the command it runs (env, nice, timeout…). */
  transparent: boolean;
  effects: Effects;
}

function noEffects(): Effects {
  return { reads: [], writes: [], floors: [], scripts: [] };
}

const ask = (reason: string): Floor => ({ decision: "ask", reason });

/** Static operand values (operands not known statically are skipped: the caller already asks for them). */
function known(items: Array<string | null>): string[] {
  return items.filter((v): v is string => v !== null);
}

const tok = (value: string): ArgvToken => ({ value, glob: false });

/**
 * Every long option of the programs below, as their `--help` lists them (syntax: options.ts).
 * Options are resolved against these lists the way getopt_long does, so an abbreviation means
 * the option it abbreviates and an unknown or ambiguous one asks.
 */
const LONG = {
  cat: "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting help version",
  head: "bytes= lines= quiet|silent verbose zero-terminated help version",
  tail: "bytes= follow=? lines= max-unchanged-stats= pid= quiet|silent retry sleep-interval= verbose zero-terminated help version",
  wc: "bytes chars lines files0-from= max-line-length words help version",
  stat: "dereference file-system cached= format= printf= terse help version",
  ls: "all almost-all author escape block-size= ignore-backups color=? directory dired classify=? file-type format= full-time group-directories-first no-group human-readable si dereference-command-line dereference-command-line-symlink-to-dir hide= hyperlink=? indicator-style= inode ignore= kibibytes dereference numeric-uid-gid literal indicator-style= hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size sort= time= time-style= tabsize= width= context zero help version",
  du: "null all apparent-size block-size= bytes total dereference-args max-depth= files0-from= human-readable inodes dereference count-links no-dereference separate-dirs si summarize threshold= time time= time-style= exclude-from= exclude= one-file-system help version",
  nl: "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= join-blank-lines= number-format= no-renumber number-separator= starting-line-number= number-width= help version",
  od: "address-radix= endian= skip-bytes= read-bytes= strings=? format= output-duplicates width=? traditional help version",
  md5sum: "binary check tag text zero ignore-missing quiet status strict warn help version",
  sha1sum: "binary check tag text zero ignore-missing quiet status strict warn help version",
  sha256sum: "binary check tag text zero ignore-missing quiet status strict warn help version",
  sha512sum: "binary check tag text zero ignore-missing quiet status strict warn help version",
  cksum: "algorithm= check length= tag untagged zero ignore-missing quiet status strict warn debug help version",
  strings: "all data print-file-name bytes= radix= include-all-whitespace target= encoding= unicode= output-separator= help version",
  readlink: "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero help version",
  realpath: "canonicalize-existing canonicalize-missing logical physical quiet relative-to= relative-base= strip|no-symlinks zero help version",
  cmp: "print-bytes ignore-initial= ignore-initial= verbose bytes= quiet|silent help version",
  comm: "check-order nocheck-order output-delimiter= total zero-terminated help version",
  diff: "normal brief report-identical-files context=? unified=? ed rcs side-by-side width= left-column suppress-common-lines show-c-function show-function-line= label= expand-tabs initial-tab tabsize= suppress-blank-empty paginate recursive no-dereference new-file unidirectional-new-file ignore-file-name-case no-ignore-file-name-case exclude= exclude-from= starting-file= from-file= to-file= ignore-case ignore-tab-expansion ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines ignore-matching-lines= text strip-trailing-cr ifdef= old-group-format= new-group-format= changed-group-format= unchanged-group-format= line-format= old-line-format= new-line-format= unchanged-line-format= minimal horizon-lines= speed-large-files color=? palette= help version",
  more: "silent logical no-pause print-over clean-print exit-on-eof squeeze plain lines= help version",
  grep: "extended-regexp fixed-strings basic-regexp perl-regexp regexp= file= ignore-case no-ignore-case word-regexp line-regexp null-data no-messages invert-match version help max-count= byte-offset line-number line-buffered with-filename no-filename label= only-matching quiet|silent binary-files= text directories= devices= recursive dereference-recursive include= exclude= exclude-from= exclude-dir= files-without-match files-with-matches count initial-tab null before-context= after-context= context= group-separator= no-group-separator color=? colour=? binary",
  sed: "quiet|silent debug expression= file= follow-symlinks in-place=? line-length= posix regexp-extended separate sandbox unbuffered null-data help version",
  file: "help version magic-file= uncompress uncompress-noreport brief checking-printout exclude= exclude-quiet= files-from= separator= mime apple extension mime-type mime-encoding keep-going list dereference no-dereference no-buffer no-pad print0 preserve-date parameter= raw special-files no-sandbox compile debug",
  sort: "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort random-source= reverse sort= version-sort batch-size= check=? compress-program= debug files0-from= key= merge output= stable buffer-size= field-separator= temporary-directory= parallel= unique zero-terminated help version",
  uniq: "count repeated all-repeated=? skip-fields= group=? ignore-case skip-chars= unique zero-terminated check-chars= help version",
  rm: "force interactive=? one-file-system no-preserve-root preserve-root=? recursive dir verbose help version",
  rmdir: "ignore-fail-on-non-empty parents verbose help version",
  shred: "force iterations= random-source= size= remove=? verbose exact zero help version",
  touch: "no-create date= no-dereference reference= time= help version",
  mkdir: "mode= parents verbose context=? help version",
  truncate: "no-create io-blocks reference= size= help version",
  tee: "append ignore-interrupts output-error=? help version",
  chmod: "changes silent|quiet verbose no-preserve-root preserve-root reference= recursive help version",
  chown: "changes silent|quiet verbose dereference no-dereference from= no-preserve-root preserve-root reference= recursive help version",
  chgrp: "changes silent|quiet verbose dereference no-dereference no-preserve-root preserve-root reference= recursive help version",
  mv: "backup=? force interactive no-clobber strip-trailing-slashes suffix= target-directory= no-target-directory update verbose context help version",
  cp: "archive attributes-only backup=? copy-contents force interactive link dereference no-clobber no-dereference preserve=? no-preserve= parents recursive reflink=? remove-destination sparse= strip-trailing-slashes symbolic-link suffix= target-directory= no-target-directory update verbose one-file-system context=? help version",
  install: "backup=? compare directory group= mode= owner= preserve-timestamps strip strip-program= suffix= target-directory= no-target-directory verbose preserve-context context=? help version",
  ln: "backup=? directory force interactive logical no-dereference physical relative symbolic suffix= target-directory= no-target-directory verbose help version",
  printenv: "null help version",
  env: "ignore-environment null unset= chdir= split-string= block-signal=? default-signal=? ignore-signal=? list-signal-handling debug help version",
  nice: "adjustment= help version",
  stdbuf: "input= output= error= help version",
  ionice: "class= classdata= pid= pgid= ignore uid= help version",
  timeout: "preserve-status foreground kill-after= signal= verbose help version",
  xargs: "null arg-file= delimiter= eof=? replace=? max-lines= max-args= open-tty max-procs= interactive process-slot-var= no-run-if-empty max-chars= show-limits verbose exit help version",
  setsid: "ctty fork wait help version",
} as const;

/** curl 7.88 (`curl --help all`); curl also accepts `--no-` before any boolean option. */
const CURL_LONG = "abstract-unix-socket= alt-svc= anyauth append aws-sigv4= basic cacert= capath= cert= cert-status cert-type= ciphers= compressed compressed-ssh config= connect-timeout= connect-to= continue-at= cookie= cookie-jar= create-dirs create-file-mode= crlf crlfile= curves= data= data-ascii= data-binary= data-raw= data-urlencode= delegation= digest disable disable-eprt disable-epsv disallow-username-in-url dns-interface= dns-ipv4-addr= dns-ipv6-addr= dns-servers= doh-cert-status doh-insecure doh-url= dump-header= egd-file= engine= etag-compare= etag-save= expect100-timeout= fail fail-early fail-with-body false-start form= form-escape form-string= ftp-account= ftp-alternative-to-user= ftp-create-dirs ftp-method= ftp-pasv ftp-port= ftp-pret ftp-skip-pasv-ip ftp-ssl-ccc ftp-ssl-ccc-mode= ftp-ssl-control get globoff happy-eyeballs-timeout-ms= haproxy-protocol head header= help=? hostpubmd5= hostpubsha256= hsts= http0.9 http1.0 http1.1 http2 http2-prior-knowledge http3 http3-only ignore-content-length include insecure interface= ipv4 ipv6 json= junk-session-cookies keepalive-time= key= key-type= krb= libcurl= limit-rate= list-only local-port= location location-trusted login-options= mail-auth= mail-from= mail-rcpt= mail-rcpt-allowfails manual max-filesize= max-redirs= max-time= metalink negotiate netrc netrc-file= netrc-optional next no-alpn no-buffer no-clobber no-keepalive no-npn no-progress-meter no-sessionid noproxy= ntlm ntlm-wb oauth2-bearer= output= output-dir= parallel parallel-immediate parallel-max= pass= path-as-is pinnedpubkey= post301 post302 post303 preproxy= progress-bar proto= proto-default= proto-redir= proxy= proxy-anyauth proxy-basic proxy-cacert= proxy-capath= proxy-cert= proxy-cert-type= proxy-ciphers= proxy-crlfile= proxy-digest proxy-header= proxy-insecure proxy-key= proxy-key-type= proxy-negotiate proxy-ntlm proxy-pass= proxy-pinnedpubkey= proxy-service-name= proxy-ssl-allow-beast proxy-ssl-auto-client-cert proxy-tls13-ciphers= proxy-tlsauthtype= proxy-tlspassword= proxy-tlsuser= proxy-tlsv1 proxy-user= proxy1.0= proxytunnel pubkey= quote= random-file= range= rate= raw referer= remote-header-name remote-name remote-name-all remote-time remove-on-error request= request-target= resolve= retry= retry-all-errors retry-connrefused retry-delay= retry-max-time= sasl-authzid= sasl-ir service-name= show-error silent socks4= socks4a= socks5= socks5-basic socks5-gssapi socks5-gssapi-nec socks5-gssapi-service= socks5-hostname= speed-limit= speed-time= ssl ssl-allow-beast ssl-auto-client-cert ssl-no-revoke ssl-reqd ssl-revoke-best-effort sslv2 sslv3 stderr= styled-output suppress-connect-headers tcp-fastopen tcp-nodelay telnet-option= tftp-blksize= tftp-no-options time-cond= tls-max= tls13-ciphers= tlsauthtype= tlspassword= tlsuser= tlsv1 tlsv1.0 tlsv1.1 tlsv1.2 tlsv1.3 tr-encoding trace= trace-ascii= trace-time unix-socket= upload-file= url= url-query= use-ascii user= user-agent= verbose version write-out= xattr";

/** GNU wget 1.21 (`wget --help`). */
const WGET_LONG = "version help background execute= output-file= append-output= debug quiet verbose no-verbose report-speed= input-file= force-html base= config= no-config rejected-log= tries= retry-connrefused retry-on-http-error= output-document= no-netrc continue start-pos= progress= show-progress timestamping no-if-modified-since no-use-server-timestamps server-response spider timeout= dns-timeout= connect-timeout= read-timeout= wait= waitretry= random-wait no-proxy quota= bind-address= limit-rate= no-dns-cache restrict-file-names= ignore-case inet4-only inet6-only prefer-family= user= password= ask-password use-askpass= no-iri local-encoding= remote-encoding= unlink xattr force-directories protocol-directories directory-prefix= cut-dirs= http-user= http-password= no-cache default-page= adjust-extension ignore-length header= compression= max-redirect= proxy-user= proxy-password= referer= save-headers user-agent= no-http-keep-alive no-cookies load-cookies= save-cookies= keep-session-cookies post-data= post-file= method= body-data= body-file= content-disposition content-on-error auth-no-challenge secure-protocol= https-only no-check-certificate certificate= certificate-type= private-key= private-key-type= ca-certificate= ca-directory= crl-file= pinnedpubkey= ciphers= no-hsts hsts-file= ftp-user= ftp-password= no-remove-listing no-glob no-passive-ftp preserve-permissions retr-symlinks ftps-implicit ftps-resume-ssl ftps-clear-data-connection ftps-fallback-to-ftp warc-file= warc-header= warc-max-size= warc-cdx warc-dedup= no-warc-compression no-warc-digests no-warc-keep-log warc-tempdir= recursive level= delete-after convert-links convert-file-only backups= backup-converted mirror page-requisites strict-comments accept= reject= accept-regex= reject-regex= regex-type= domains= exclude-domains= follow-ftp follow-tags= ignore-tags= span-hosts relative include-directories= trust-server-names exclude-directories= no-parent no-clobber no-directories no-host-directories";

/** sudo 1.9 (sudo(8) "OPTIONS"). */
const SUDO_LONG = "askpass background bell close-from= chdir= preserve-env=? edit group= set-home help host= login remove-timestamp reset-timestamp list non-interactive preserve-groups prompt= chroot= role= stdin shell type= command-timeout= other-user= user= version validate";

/** tree 2.x: its own parser takes long options only in full. */
const TREE_LONG = "help version inodes device noreport nolinks dirsfirst filesfirst filelimit= charset= si du prune timefmt= fromfile fromtabfile gitignore gitfile= info infofile= hyperlink scheme= authority= noindent ignore-case matchdirs metafirst sort=";

/** ripgrep 14 (clap: long options only in full; `--no-` forms are separate options). */
const RG_LONG = [
  "regexp= file= after-context= before-context= binary block-buffered byte-offset case-sensitive color= colors= column context= context-separator= count count-matches crlf debug dfa-size-limit= encoding= engine= field-context-separator= field-match-separator= files files-with-matches files-without-match fixed-strings follow generate= glob= glob-case-insensitive heading help hidden hostname-bin= hyperlink-format= iglob= ignore-case ignore-file= ignore-file-case-insensitive include-zero invert-match json line-buffered line-number line-regexp max-columns= max-columns-preview max-count= max-depth= max-filesize= maxdepth= mmap multiline multiline-dotall no-config no-filename no-heading no-ignore no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs no-line-number no-messages no-mmap no-pcre2-unicode no-require-git no-unicode null null-data one-file-system only-matching passthru passthrough path-separator= pcre2 pcre2-version pre= pre-glob= pretty quiet regex-size-limit= replace= search-zip smart-case sort= sortr= stats stop-on-nonmatch text threads= trim type= type-add= type-clear= type-list type-not= unrestricted version vimgrep with-filename word-regexp",
  "no-binary no-block-buffered no-byte-offset no-column no-context-separator no-crlf no-encoding no-fixed-strings no-follow no-glob-case-insensitive no-heading no-hidden no-ignore-case no-ignore-file-case-insensitive no-include-zero no-invert-match no-json no-line-buffered no-max-columns-preview no-multiline no-multiline-dotall no-no-ignore no-pcre2 no-pre no-search-zip no-sort-files no-stats no-text no-trim no-auto-hybrid-regex auto-hybrid-regex sort-files",
].join(" ");

// ---------------------------------------------------------------------------------------------
// Wrappers
// ---------------------------------------------------------------------------------------------

/**
 * Environment variables that only change formatting, so `VAR=x cmd` stays read-only. Anything else
 * (`PATH`, `LD_PRELOAD`, `GIT_PAGER`, `BASH_ENV`…) can make an allowed program run other code.
 */
export const HARMLESS_ENV_NAMES = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|CLICOLOR|COLUMNS|LINES|TERM)$/;

/**
 * `NAME=value` words from `start` (as `env` and `sudo` accept them before the command): asks for
 * each one that is not harmless. Returns the index of the command that follows them.
 */
function leadingAssignments(tokens: ArgvToken[], start: number, via: string, effects: Effects): number {
  let i = start;
  for (; i < tokens.length && tokens[i].value !== null && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[i].value!); i++) {
    const name = tokens[i].value!.slice(0, tokens[i].value!.indexOf("="));
    if (!HARMLESS_ENV_NAMES.test(name)) effects.floors.push(ask(`${via}: sets ${name} for the command it runs`));
  }
  return i;
}

/** A wrapper's reading of its arguments: the command it runs (null: none), its own effects. */
type Unwrapper = (tokens: ArgvToken[]) => { inner: ArgvToken[] | null; effects: Effects; transparent: boolean; openEnded?: boolean };

const WRAPPERS: Record<string, Unwrapper> = {
  env(tokens) {
    const effects = noEffects();
    const { options, operands } = parseFor("env", tokens, { shortValue: "uCS", long: LONG.env, stopAtOperand: true }, effects);
    if (has(options, "S", "split-string")) effects.floors.push(ask("unclassifiable: env -S splits a string into a command"));
    if (has(options, "C", "chdir")) effects.floors.push(ask("env --chdir: runs the command in another directory"));
    const i = leadingAssignments(tokens, operands.length ? operands[0].index : tokens.length, "env", effects);
    if (i >= tokens.length) {
      effects.floors.push(ask("env: prints the environment"));
      return { inner: null, effects, transparent: false };
    }
    return { inner: tokens.slice(i), effects, transparent: true };
  },
  command(tokens) {
    const effects = noEffects();
    const { options, operands } = parseFor("command", tokens, { stopAtOperand: true }, effects);
    if (has(options, "v") || has(options, "V")) return { inner: null, effects, transparent: false };
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: true };
  },
  builtin: (tokens) => ({ inner: tokens.length ? tokens : null, effects: noEffects(), transparent: true }),
  exec(tokens) {
    const effects = noEffects();
    const { operands } = parseFor("exec", tokens, { shortValue: "a", stopAtOperand: true }, effects);
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: true };
  },
  nice: simpleWrapper("nice", { shortValue: "n", long: LONG.nice }),
  nohup: simpleWrapper("nohup", { long: "help version" }),
  // setsid leaves the process group, so a timeout could not stop what it runs: not looked through.
  setsid(tokens) {
    const effects = noEffects();
    const { operands } = parseFor("setsid", tokens, { long: LONG.setsid, stopAtOperand: true }, effects);
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: false };
  },
  stdbuf: simpleWrapper("stdbuf", { shortValue: "ioe", long: LONG.stdbuf }),
  ionice(tokens) {
    const effects = noEffects();
    const { options, operands } = parseFor("ionice", tokens, { shortValue: "cnpPu", long: LONG.ionice, stopAtOperand: true }, effects);
    if (has(options, "p", "pid") || has(options, "P", "pgid") || has(options, "u", "uid")) return { inner: null, effects, transparent: false };
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: true };
  },
  time(tokens) {
    const effects = noEffects();
    const { options, operands } = parseFor("time", tokens, { shortValue: "fo", long: "format= portability output= append verbose quiet help version", stopAtOperand: true }, effects);
    effects.writes.push(...known(values(options, "o", "output")));
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: true };
  },
  timeout(tokens) {
    const effects = noEffects();
    const { operands } = parseFor("timeout", tokens, { shortValue: "sk", long: LONG.timeout, stopAtOperand: true }, effects);
    // The first operand is the duration; the command follows it.
    return { inner: operands.length > 1 ? tokens.slice(operands[1].index) : null, effects, transparent: true };
  },
  xargs(tokens) {
    const spec: OptionSpec = {
      shortValue: "adEILnPs",
      shortOptional: "eil",
      long: LONG.xargs,
      stopAtOperand: true,
    };
    const effects = noEffects();
    const { options, operands } = parseFor("xargs", tokens, spec, effects);
    effects.reads.push(...known(values(options, "a", "arg-file")));
    const replace = [...values(options, "I", "replace"), ...values(options, "i")].map((v) => v ?? "{}");
    const explicit = has(options, "I", "replace") || has(options, "i");
    let inner = operands.length ? tokens.slice(operands[0].index) : [tok("echo")];
    if (explicit) inner = inner.map((t) => (t.value !== null && replace.some((r) => t.value!.includes(r)) ? { value: null, glob: false } : t));
    return { inner, effects, transparent: false, openEnded: !explicit };
  },
  sudo(tokens) {
    const spec: OptionSpec = {
      shortValue: "CDghpRrtTUu",
      long: SUDO_LONG,
      stopAtOperand: true,
    };
    const effects = noEffects();
    const { options, operands } = parseFor("sudo", tokens, spec, effects);
    if (has(options, "e", "edit") || has(options, "l", "list") || has(options, "v", "validate")) return { inner: null, effects, transparent: false };
    const i = leadingAssignments(tokens, operands.length ? operands[0].index : tokens.length, "sudo", effects);
    return { inner: i < tokens.length ? tokens.slice(i) : null, effects, transparent: false };
  },
  doas(tokens) {
    const effects = noEffects();
    const { operands } = parseFor("doas", tokens, { shortValue: "uC", stopAtOperand: true }, effects);
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: false };
  },
  busybox: (tokens) => ({ inner: tokens.length ? tokens : null, effects: noEffects(), transparent: false }),
  coproc: (tokens) => ({ inner: tokens.length ? tokens : null, effects: noEffects(), transparent: false }),
};

function simpleWrapper(name: string, spec: OptionSpec): Unwrapper {
  const full: OptionSpec = { ...spec, stopAtOperand: true };
  return (tokens) => {
    const effects = noEffects();
    const { operands } = parseFor(name, tokens, full, effects);
    return { inner: operands.length ? tokens.slice(operands[0].index) : null, effects, transparent: true };
  };
}

/**
 * `parseArgs`, with every unknown or ambiguous long option added to `effects` as an ask: the
 * policy cannot know what the program makes of an option it does not know.
 */
function parseFor(name: string, tokens: ArgvToken[], spec: OptionSpec, effects: Effects): ParsedArgs {
  const parsed = parseArgs(tokens, spec);
  for (const p of parsed.problems) effects.floors.push(ask(`${name} ${p}`));
  return parsed;
}

/** `sh -c STRING`: options of POSIX shells; returns the command string token, if any. */
function shellEffects(tokens: ArgvToken[], name: string): Effects {
  const effects = noEffects();
  let hasC = false;
  let i = 0;
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null) {
      effects.floors.push(ask(`unclassifiable: ${name} option not static`));
      return effects;
    }
    if (v === "--" || v === "-") {
      i++;
      break;
    }
    if (!/^[-+]/.test(v)) break;
    if (["-o", "+o", "-O", "+O", "--rcfile", "--init-file"].includes(v)) {
      i++;
      continue;
    }
    if (/^-[A-Za-z]+$/.test(v) && v.includes("c")) hasC = true;
  }
  if (!hasC) {
    // `sh script.sh` runs a file; `sh` alone reads commands from stdin (`curl … | sh`).
    if (i < tokens.length && tokens[i].value !== null) effects.reads.push(tokens[i].value!);
    effects.floors.push(ask(`unclassifiable: ${name} runs commands from ${i < tokens.length ? "a script file" : "standard input"} the policy cannot read`));
    return effects;
  }
  effects.scripts.push({ via: `${name} -c`, source: tokens[i]?.value ?? null });
  return effects;
}

/**
 * Splits a command into layers: each wrapper, then the command it runs (recursively), then
 * commands that options of the innermost one run (`find -exec`). The first layer is `argv`
 * itself. Never throws.
 */
export function unwrapCommand(argv: Argv, depth = 0): Layer[] {
  const name = commandName(argv);
  const rest = argv.tokens.slice(1);
  const wrapper = name !== null && depth < 16 && Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
  if (wrapper) {
    const w = wrapper(rest);
    const layer: Layer = { argv, transparent: w.transparent && w.inner !== null, effects: w.effects };
    if (!w.inner) return [layer];
    const inner: Argv = { tokens: w.inner, openEnded: argv.openEnded || (w.openEnded ?? false) };
    return [layer, ...unwrapCommand(inner, depth + 1)];
  }
  const { normalized, effects, inner } = programEffects(name, argv);
  const layers: Layer[] = [{ argv: normalized, transparent: false, effects }];
  for (const cmd of inner) layers.push(...unwrapCommand({ tokens: cmd, openEnded: false }, depth + 1));
  return layers;
}

/**
 * Programs whose every file effect this module models (the paths they read and write, the
 * programs their options run), so that the policy's static reading of them is complete: with the
 * floors above they are read-only when nothing else asks. Only these may be allowed for a command
 * that will not run inside the sandbox (decide.ts); git only for the subcommands listed.
 */
const STATIC_READ_ONLY = new Set([
  "cat", "head", "tail", "wc", "stat", "ls", "du", "nl", "od", "md5sum", "sha1sum", "sha256sum", "sha512sum", "cksum",
  "strings", "readlink", "realpath", "cmp", "comm", "diff", "less", "more", "grep", "egrep", "fgrep", "rg", "sed",
  "file", "tree", "sort", "uniq", "find", "echo", "printf", "pwd", "true", "false", "test", "[", ":", "cd", "pushd",
  "popd", "dirs", "which", "type", "basename", "dirname", "whoami", "id", "uname", "sleep", "seq",
]);
const STATIC_READ_ONLY_GIT = new Set(["status", "diff", "log", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse", "describe", "shortlog", "rev-list", "cat-file"]);

/**
 * True when `argv` (one layer, git's global options already removed) is a program whose effects
 * the policy models completely (see STATIC_READ_ONLY): what it reads and writes is known, so a
 * decision to allow it does not rely on the sandbox.
 */
export function isStaticallyModelled(argv: Argv): boolean {
  const name = commandName(argv);
  if (name === null) return false;
  if (name === "git") {
    const sub = argv.tokens[1]?.value;
    return sub !== null && sub !== undefined && STATIC_READ_ONLY_GIT.has(sub);
  }
  return STATIC_READ_ONLY.has(name);
}

/** The basename of argv[0] when static (`/usr/bin/env` → `env`), else null. */
export function commandName(argv: Argv): string | null {
  const first = argv.tokens[0];
  if (!first || first.value === null || first.glob) return null;
  return path.posix.basename(first.value);
}

// ---------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------

interface ProgramResult {
  /** argv used for rule matching (git's global options removed). */
  normalized: Argv;
  effects: Effects;
  /** Commands run by options (`find -exec CMD ;`). */
  inner: ArgvToken[][];
}

/** A program the policy knows: how its options are written and what its operands do. */
interface Program {
  spec: OptionSpec;
  effects(parsed: ParsedArgs, tokens: ArgvToken[], effects: Effects): void;
}

/** A program whose operands are all read. */
function reader(spec: OptionSpec = {}): Program {
  return {
    spec,
    effects(parsed, _t, effects) {
      effects.reads.push(...known(parsed.operands.map((o) => o.value)));
      effects.reads.push(...known(values(parsed.options, null, "files0-from", "from-file", "to-file")), ...known(values(parsed.options, "X", "exclude-from")));
    },
  };
}

/** A program whose operands are all written (created, changed, deleted, or their metadata changed). */
function writer(spec: OptionSpec = {}, opts: { skipFirst?: boolean } = {}): Program {
  return {
    spec,
    effects(parsed, _t, effects) {
      const skip = opts.skipFirst && !has(parsed.options, null, "reference");
      effects.writes.push(...known((skip ? parsed.operands.slice(1) : parsed.operands).map((o) => o.value)));
      effects.reads.push(...known(values(parsed.options, "r", "reference")));
    },
  };
}

/** A program that always asks (or asks when `when` holds), whatever rule allows it. */
function asks(reason: string, when: (parsed: ParsedArgs, tokens: ArgvToken[]) => boolean = () => true): Program {
  return {
    spec: {},
    effects(parsed, tokens, effects) {
      if (when(parsed, tokens)) effects.floors.push(ask(reason));
    },
  };
}

const GREP_SPEC: OptionSpec = {
  shortValue: "efmABCdD",
  long: LONG.grep,
};

const RG_SPEC: OptionSpec = {
  shortValue: "efgtTmABCEjMrd",
  long: RG_LONG,
  exactLong: true,
};

const SED_SPEC: OptionSpec = { shortValue: "efl", shortOptional: "i", long: LONG.sed };

const COPY_SPEC: OptionSpec = { shortValue: "tSmog", long: `${LONG.cp} ${LONG.install}` };

/**
 * binutils strings: an operand `@FILE` is a response file (its contents become more options and
 * operands), which the policy cannot check; the file itself is read.
 */
const stringsEffects: Program["effects"] = (parsed, _t, effects) => {
  for (const o of parsed.operands) {
    if (o.value?.startsWith("@")) {
      effects.reads.push(o.value.slice(1));
      effects.floors.push(ask(`strings ${o.value}: takes more options and file names from ${o.value.slice(1)}, which the policy cannot check`));
    } else if (o.value !== null) {
      effects.reads.push(o.value);
    }
  }
};

/**
 * Options that take the names of the files to read from a file (`--files0-from=F`,
 * `file -f F`, `tar -T F`): the list is read when the command runs and cannot be checked before,
 * so they ask; the list file itself is a read.
 */
const FILE_LIST_OPTIONS: Record<string, { short: string | null; long: string[] }> = {
  wc: { short: null, long: ["files0-from"] },
  du: { short: null, long: ["files0-from"] },
  sort: { short: null, long: ["files0-from"] },
  file: { short: "f", long: ["files-from"] },
  tar: { short: "T", long: ["files-from"] },
};

/** grep and friends: the first operand is the pattern unless -e/-f give it. */
const grepLike: Program["effects"] = (parsed, _t, effects) => {
  const explicitPattern = has(parsed.options, "e", "regexp") || has(parsed.options, "f", "file");
  const files = explicitPattern ? parsed.operands : parsed.operands.slice(1);
  effects.reads.push(...known(files.map((o) => o.value)), ...known(values(parsed.options, "f", "file")), ...known(values(parsed.options, null, "exclude-from")));
};

/**
 * grep -r / -R / --recursive / --dereference-recursive / -d recurse (`--directories=rec`, an
 * abbreviation GNU grep accepts): every operand (or "." when none) is walked. grep skips nothing
 * on its own but what --exclude-dir / --exclude / --include name.
 */
const grepEffects: Program["effects"] = (parsed, tokens, effects) => {
  grepLike(parsed, tokens, effects);
  const directories = values(parsed.options, "d", "directories");
  const recursive =
    has(parsed.options, "r", "recursive") || has(parsed.options, "R", "dereference-recursive") || directories.some((v) => v === null || (v.length > 0 && "recurse".startsWith(v)));
  if (!recursive) return;
  const explicitPattern = has(parsed.options, "e", "regexp") || has(parsed.options, "f", "file");
  const roots = known((explicitPattern ? parsed.operands : parsed.operands.slice(1)).map((o) => o.value));
  const excludeDirs = values(parsed.options, null, "exclude-dir");
  const excludes = values(parsed.options, null, "exclude");
  const includes = values(parsed.options, null, "include");
  const walk = { via: "grep -r", skipHidden: false, skipDirs: known(excludeDirs), excludeFiles: known(excludes), includeFiles: known(includes) };
  // A filter known only at run time cannot narrow the walk: it is checked unfiltered.
  if ([...excludeDirs, ...excludes, ...includes].includes(null)) Object.assign(walk, { skipDirs: [], excludeFiles: [], includeFiles: [] });
  effects.walks = (roots.length ? roots : ["."]).map((root) => ({ root, ...walk }));
};

/**
 * ripgrep walks its operands (or "." when none) recursively, skipping hidden files and
 * directories unless `--hidden`, `-.` or `-uu` (`--unrestricted` twice) says otherwise. Its
 * .gitignore handling is not modelled: an ignored file is treated as read (the walk may ask
 * where rg would not). `--files` and `--type-list` read no content.
 */
const rgEffects: Program["effects"] = (parsed, tokens, effects) => {
  grepLike(parsed, tokens, effects);
  for (const o of ["pre", "hostname-bin"]) if (has(parsed.options, null, o)) effects.floors.push(ask(`rg --${o}: runs another program`));
  effects.reads.push(...known(values(parsed.options, null, "ignore-file")));
  if (has(parsed.options, null, "files") || has(parsed.options, null, "type-list")) return;
  const explicitPattern = has(parsed.options, "e", "regexp") || has(parsed.options, "f", "file");
  const roots = known((explicitPattern ? parsed.operands : parsed.operands.slice(1)).map((o) => o.value));
  const unrestricted = parsed.options.filter((o) => o.name === "-u" || o.name === "--unrestricted").length;
  const hidden = has(parsed.options, ".", "hidden") || unrestricted >= 2;
  effects.walks = (roots.length ? roots : ["."]).map((root) => ({ root, via: "rg", skipHidden: !hidden, skipDirs: [], excludeFiles: [], includeFiles: [] }));
};

/**
 * curl: which arguments name files it reads or writes (curl(1)). Reads: `-d/--data`,
 * `--data-ascii`, `--data-binary`, `--json`, `-H/--header`, `-w/--write-out` with `@FILE`;
 * `--data-urlencode [NAME]@FILE`; `-F/--form NAME=@FILE` or `NAME=<FILE`; `-T/--upload-file`;
 * `-b/--cookie` without `=`; certificates, keys and other input files; `-K/--config` (more
 * options from a file: asks). Writes: `-o`, `-c`, `-D`, `--trace*`, `--stderr`, `--libcurl`,
 * `--etag-save`, `-O`/`-J` (a name chosen by the server, in the working directory).
 */
const CURL_SPEC: OptionSpec = { shortValue: "EKCbcdDFPHhmoUQreXYytzTuAw", long: CURL_LONG };
function curlEffects(parsed: ParsedArgs, _t: ArgvToken[], effects: Effects): void {
  const at = (v: string | null) => (v !== null && v.startsWith("@") && v !== "@-" ? v.slice(1) : null);
  // `file://` URLs read local files.
  for (const u of [...parsed.operands.map((o) => o.value), ...values(parsed.options, null, "url")]) {
    const m = u === null ? null : /^file:\/\/(?:localhost)?(\/.*)$/i.exec(u);
    if (m) effects.reads.push(decodeURIComponentSafe(m[1]));
  }
  for (const o of parsed.options) {
    const v = o.value;
    const n = o.name;
    if (["-d", "--data", "--data-ascii", "--data-binary", "--json", "-H", "--header", "--proxy-header", "-w", "--write-out"].includes(n)) {
      const f = at(v);
      if (f) effects.reads.push(f);
    } else if (n === "--data-urlencode" && v !== null) {
      const m = /^[^=]*?@(.+)$/s.exec(v);
      if (m && m[1] !== "-") effects.reads.push(m[1]);
    } else if ((n === "-F" || n === "--form") && v !== null) {
      const m = /^[^=]*=[@<]("?)([^";]+)\1/.exec(v);
      if (m && m[2] !== "-") effects.reads.push(m[2]);
    } else if ((n === "-T" || n === "--upload-file") && v !== null && v !== "-" && v !== ".") {
      effects.reads.push(v);
      if (/[[{]/.test(v) && !has(parsed.options, "g", "globoff")) effects.floors.push(ask(`curl ${o.written} ${v}: curl expands the braces or brackets into several files`));
    } else if ((n === "-b" || n === "--cookie") && v !== null && !v.includes("=")) {
      effects.reads.push(v);
    } else if ((n === "-K" || n === "--config") && v !== null) {
      if (v !== "-") effects.reads.push(v);
      effects.floors.push(ask(`curl ${o.written}: takes more options from ${v}, which the policy cannot check`));
    } else if (["-E", "--cert", "--key", "--cacert", "--capath", "--crlfile", "--proxy-cacert", "--proxy-capath", "--proxy-cert", "--proxy-key", "--proxy-crlfile", "--netrc-file", "--etag-compare", "--random-file", "--egd-file", "--hsts", "--alt-svc"].includes(n) && v !== null) {
      effects.reads.push(n === "-E" || n === "--cert" ? v.replace(/:[^/]*$/, "") : v);
    } else if (["-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--output-dir"].includes(n) && v !== null && v !== "-") {
      effects.writes.push(v);
    } else if (n === "-O" || n === "--remote-name" || n === "--remote-name-all" || n === "-J" || n === "--remote-header-name") {
      effects.writes.push(".");
    } else if (n === "-n" || n === "--netrc" || n === "--netrc-optional") {
      effects.floors.push(ask(`curl ${o.written}: reads login details from ~/.netrc`));
    }
  }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** wget (wget(1)): files it reads (`--post-file`, `--body-file`, `-i`, certificates…), writes, and `-e` wgetrc commands (ask). */
const WGET_SPEC: OptionSpec = { shortValue: "eoaiBtOTwQPUlARDIX", long: WGET_LONG };
function wgetEffects(parsed: ParsedArgs, _t: ArgvToken[], effects: Effects): void {
  let named = false;
  for (const o of parsed.options) {
    const v = o.value;
    const n = o.name;
    if (["--post-file", "--body-file", "-i", "--input-file", "--config", "--load-cookies", "--certificate", "--private-key", "--ca-certificate", "--crl-file", "--hsts-file"].includes(n)) {
      if (v !== null && v !== "-") effects.reads.push(v);
    } else if (["-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "--save-cookies", "-P", "--directory-prefix", "--warc-file", "--rejected-log"].includes(n)) {
      if (v !== null && v !== "-") effects.writes.push(v);
      if (n === "-O" || n === "--output-document" || n === "-P" || n === "--directory-prefix") named = true;
    } else if (n === "-e" || n === "--execute") {
      effects.floors.push(ask(`wget ${o.written}: runs wgetrc commands, which can change where it reads and writes`));
    }
  }
  if (!named) effects.writes.push(".");
}

/**
 * Programs that upload files named in their arguments, without a full option model: gh (`--body-file`,
 * `--input`, `-F/--field NAME=@FILE`, `--notes-file`; `-F FILE` of `gh pr/issue create`), HTTPie
 * (`NAME=@FILE`, `NAME:=@FILE`, `@FILE`), scp (local operands).
 */
function uploaderEffects(name: string, tokens: ArgvToken[], effects: Effects): void {
  const vals = tokens.map((t) => t.value);
  for (let i = 0; i < vals.length; i++) {
    const v = vals[i];
    if (v === null) continue;
    const next = vals[i + 1] ?? null;
    if (name === "gh") {
      const eq = /^--(body-file|input|notes-file|template-file|file)=(.+)$/.exec(v);
      if (eq) effects.reads.push(eq[2]);
      else if (/^--(body-file|input|notes-file|template-file)$/.test(v) && next !== null) effects.reads.push(next);
      const field = /^(?:-F|--field|--raw-field|-f)=?(.*)$/.exec(v);
      const fv = field ? field[1] || next : null;
      if (field && fv) {
        const m = /^[^=]*=@(.+)$/.exec(fv);
        if (m) effects.reads.push(m[1]);
        else if ((vals[1] === "pr" || vals[1] === "issue" || vals[1] === "release") && !fv.includes("=")) effects.reads.push(fv);
      }
    } else if (name === "http" || name === "https" || name === "xh") {
      const m = /^[^=:@]*(?:=@|:=@)(.+)$/.exec(v) ?? /^@(.+)$/.exec(v);
      if (m) effects.reads.push(m[1]);
    } else if (name === "scp" && !v.startsWith("-") && !/^[^/]*:/.test(v)) {
      effects.reads.push(v);
    }
  }
}

const PROGRAMS: Record<string, Program> = {
  // Readers (GNU coreutils and friends).
  cat: reader({ long: LONG.cat }),
  head: reader({ shortValue: "nc", long: LONG.head }),
  tail: reader({ shortValue: "ncs", long: LONG.tail }),
  wc: reader({ long: LONG.wc }),
  stat: reader({ shortValue: "c", long: LONG.stat }),
  ls: reader({ shortValue: "ITw", long: LONG.ls }),
  du: reader({ shortValue: "BdtX", long: LONG.du }),
  nl: reader({ shortValue: "bdfhilnsvw", long: LONG.nl }),
  od: reader({ shortValue: "AjNStw", long: LONG.od }),
  md5sum: reader({ long: LONG.md5sum }),
  sha1sum: reader({ long: LONG.sha1sum }),
  sha256sum: reader({ long: LONG.sha256sum }),
  sha512sum: reader({ long: LONG.sha512sum }),
  cksum: reader({ shortValue: "al", long: LONG.cksum }),
  strings: { spec: { shortValue: "ntTes", long: LONG.strings }, effects: stringsEffects },
  readlink: reader({ long: LONG.readlink }),
  realpath: reader({ long: LONG.realpath }),
  cmp: reader({ shortValue: "in", long: LONG.cmp }),
  comm: reader({ long: LONG.comm }),
  diff: reader({ shortValue: "CUFIxXSDLW", long: LONG.diff }),
  less: {
    spec: { shortValue: "bhjkoOpPtTxyz#" },
    effects(parsed, tokens, effects) {
      reader().effects(parsed, tokens, effects);
      // -o/-O copy the input to a log file; -k reads a key binding file.
      effects.writes.push(...known(values(parsed.options, "o")), ...known(values(parsed.options, "O")));
      effects.reads.push(...known(values(parsed.options, "k")), ...known(values(parsed.options, "T")));
    },
  },
  more: reader({ shortValue: "n", long: LONG.more }),
  grep: { spec: GREP_SPEC, effects: grepEffects },
  egrep: { spec: GREP_SPEC, effects: grepEffects },
  fgrep: { spec: GREP_SPEC, effects: grepEffects },
  rg: { spec: RG_SPEC, effects: rgEffects },
  sed: { spec: SED_SPEC, effects: sedEffects },
  curl: { spec: CURL_SPEC, effects: curlEffects },
  wget: { spec: WGET_SPEC, effects: wgetEffects },
  file: {
    spec: { shortValue: "mfFeP", long: LONG.file },
    effects(parsed, _t, effects) {
      if (has(parsed.options, "C", "compile")) effects.floors.push(ask("file -C: writes a compiled magic file"));
      effects.reads.push(...known(parsed.operands.map((o) => o.value)), ...known(values(parsed.options, "m", "magic-file")), ...known(values(parsed.options, "f", "files-from")));
    },
  },
  tree: {
    spec: { shortValue: "LPIHTo", long: TREE_LONG, exactLong: true },
    effects(parsed, _t, effects) {
      effects.writes.push(...known(values(parsed.options, "o")));
      effects.reads.push(...known(parsed.operands.map((o) => o.value)));
    },
  },
  sort: {
    spec: { shortValue: "kotST", long: LONG.sort },
    effects(parsed, _t, effects) {
      effects.writes.push(...known(values(parsed.options, "o", "output")));
      if (has(parsed.options, null, "compress-program")) effects.floors.push(ask("sort --compress-program: runs another program"));
      effects.reads.push(...known(parsed.operands.map((o) => o.value)), ...known(values(parsed.options, null, "files0-from")));
    },
  },
  uniq: {
    spec: { shortValue: "fsw", long: LONG.uniq },
    effects(parsed, _t, effects) {
      const [input, output] = parsed.operands.map((o) => o.value);
      effects.reads.push(...known([input ?? null]));
      effects.writes.push(...known([output ?? null]));
    },
  },
  // Writers.
  rm: writer({ long: LONG.rm }),
  rmdir: writer({ long: LONG.rmdir }),
  unlink: writer({ long: "help version" }),
  shred: writer({ shortValue: "ns", long: LONG.shred }),
  touch: writer({ shortValue: "dtr", long: LONG.touch }),
  mkdir: writer({ shortValue: "m", long: LONG.mkdir }),
  truncate: writer({ shortValue: "sr", long: LONG.truncate }),
  tee: writer({ long: LONG.tee }),
  chmod: writer({ long: LONG.chmod }, { skipFirst: true }),
  chown: writer({ long: LONG.chown }, { skipFirst: true }),
  chgrp: writer({ long: LONG.chgrp }, { skipFirst: true }),
  mv: writer({ shortValue: "tS", long: LONG.mv }),
  cp: { spec: COPY_SPEC, effects: copyLike },
  install: {
    spec: COPY_SPEC,
    effects(parsed, tokens, effects) {
      if (has(parsed.options, null, "strip-program")) effects.floors.push(ask("install --strip-program: runs another program"));
      if (has(parsed.options, "d", "directory")) effects.writes.push(...known(parsed.operands.map((o) => o.value)));
      else copyLike(parsed, tokens, effects);
    },
  },
  ln: {
    spec: { shortValue: "tS", long: LONG.ln },
    effects(parsed, _t, effects) {
      const target = values(parsed.options, "t", "target-directory");
      const ops = parsed.operands.map((o) => o.value);
      if (target.length) effects.writes.push(...known(target));
      else if (ops.length === 1) effects.writes.push(...known([ops[0] === null ? null : path.posix.basename(ops[0])]));
      else effects.writes.push(...known([ops[ops.length - 1] ?? null]));
    },
  },
  dd: {
    spec: {},
    effects(parsed, _t, effects) {
      for (const o of parsed.operands) {
        if (o.value?.startsWith("of=")) effects.writes.push(o.value.slice(3));
        if (o.value?.startsWith("if=")) effects.reads.push(o.value.slice(3));
      }
    },
  },
  // The environment and the shell itself.
  printenv: asks("printenv: prints the environment"),
  export: asks("export: prints the environment", (parsed) => parsed.operands.length === 0),
  set: asks("set: prints every variable", (_p, tokens) => tokens.length === 0),
  eval: {
    spec: { stopAtOperand: true },
    effects(_p, tokens, effects) {
      effects.floors.push(ask("unclassifiable: eval runs its arguments as a new command line"));
      const staticArgs = tokens.every((t) => t.value !== null && !t.glob);
      effects.scripts.push({ via: "eval", source: staticArgs ? tokens.map((t) => t.value).join(" ") : null });
    },
  },
  source: asks("unclassifiable: source runs a script the policy cannot read"),
  shopt: asks("shopt: changes shell options (how wildcards expand, aliases), which the policy reads with bash's defaults"),
  ".": asks("unclassifiable: . runs a script the policy cannot read"),
  trap: {
    spec: { stopAtOperand: true },
    effects(parsed, _t, effects) {
      // `trap ACTION SIGNAL…`: ACTION is a command line run later by this shell.
      if (has(parsed.options, "p") || has(parsed.options, "l") || parsed.operands.length < 2) return;
      const action = parsed.operands[0].value;
      if (action !== "-" && action !== "") effects.scripts.push({ via: "trap", source: action });
    },
  },
  alias: {
    spec: {},
    effects(parsed, _t, effects) {
      if (parsed.operands.some((o) => o.value === null || o.value.includes("="))) {
        effects.floors.push(ask("unclassifiable: alias definitions change how later commands are read"));
      }
    },
  },
};

/**
 * Programs whose options can run other programs or write files: a glob that may expand to an
 * option (`*` matching a file named `-delete`), or arguments appended by xargs, make them ask.
 */
const OPTION_SENSITIVE = new Set(["find", "sed", "git", "sort", "rg", "tree", "file", "tee", "cp", "mv", "ln", "install", "dd", "tar", "rsync", "zip", "unzip", "diff", "uniq", "touch", "truncate", "chmod", "chown"]);

function copyLike(parsed: ParsedArgs, _t: ArgvToken[], effects: Effects): void {
  const target = values(parsed.options, "t", "target-directory");
  const ops = parsed.operands.map((o) => o.value);
  if (target.length) {
    effects.writes.push(...known(target));
    effects.reads.push(...known(ops));
  } else {
    effects.writes.push(...known([ops[ops.length - 1] ?? null]));
    effects.reads.push(...known(ops.slice(0, -1)));
  }
}

function sedEffects(parsed: ParsedArgs, _t: ArgvToken[], effects: Effects): void {
  const expressions = values(parsed.options, "e", "expression");
  const scriptFiles = values(parsed.options, "f", "file");
  let operands = parsed.operands;
  let script: string | null;
  if (expressions.length || scriptFiles.length) {
    script = expressions.some((e) => e === null) ? null : expressions.join("\n");
  } else {
    script = operands[0]?.value ?? null;
    operands = operands.slice(1);
  }
  const files = known(operands.map((o) => o.value));
  if (scriptFiles.length) effects.floors.push(ask("sed -f: the script is in a file the policy does not read"));
  if (has(parsed.options, "i", "in-place")) effects.writes.push(...files);
  else effects.reads.push(...files);
  if (has(parsed.options, null, "sandbox")) return; // sed refuses e/r/w in sandbox mode
  if (script === null) return; // not static: the caller already asks
  const analysis = analyzeSedScript(script);
  if (!analysis.understood) effects.floors.push(ask("sed: script not understood, may write files or run commands"));
  if (analysis.executes) effects.floors.push(ask("sed e: runs shell commands"));
  effects.writes.push(...analysis.writes);
  effects.reads.push(...analysis.reads);
}

/**
 * git's global options (git(1) "OPTIONS"; git.c reads them in full, no abbreviations): those that
 * take a value, and the others it knows. Anything else before the subcommand is unknown and asks.
 */
const GIT_GLOBAL_VALUE = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--list-cmds", "--attr-source"]);
const GIT_GLOBAL_FLAGS = new Set([
  "-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--bare", "--literal-pathspecs", "--glob-pathspecs",
  "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--html-path", "--man-path",
  "--info-path", "--exec-path", "-v", "--version", "-h", "--help",
]);

/** Global options that make git use another configuration, repository or program. */
const GIT_GLOBAL_ASKS: Record<string, string> = {
  "-c": "configuration on the command line can make git run other programs",
  "--config-env": "configuration from the environment can make git run other programs",
  "--exec-path": "runs git's subcommands from another directory",
  "--git-dir": "uses another repository, whose configuration can run programs",
  "--work-tree": "uses another working tree",
  "--bare": "treats the directory as a bare repository, whose configuration can run programs",
  "--super-prefix": "an internal option",
};

/**
 * Long options of git subcommands that write, read arbitrary files or run programs. git's
 * option parser accepts unambiguous prefixes, so any written option that is a prefix of one of
 * these counts as it (`--outp=x` is `--output=x`). `kind` says what its value is.
 */
const GIT_RISKY_LONG: Array<{ name: string; kind: "write" | "read" | "list" | "runs" | "reads-any"; what: string }> = [
  { name: "output", kind: "write", what: "writes its output to a file" },
  { name: "no-index", kind: "reads-any", what: "compares arbitrary files, not the repository" },
  { name: "open-files-in-pager", kind: "runs", what: "runs a pager program" },
  { name: "upload-pack", kind: "runs", what: "runs another program on the remote side" },
  { name: "receive-pack", kind: "runs", what: "runs another program on the remote side" },
  { name: "exec", kind: "runs", what: "runs another program" },
  { name: "config", kind: "runs", what: "sets configuration that can run programs" },
  { name: "template", kind: "runs", what: "copies hooks from a template directory" },
  { name: "pathspec-from-file", kind: "list", what: "takes the paths from a file the policy cannot check" },
  { name: "file", kind: "read", what: "reads a file" },
  { name: "contents", kind: "read", what: "reads a file" },
  { name: "ignore-revs-file", kind: "read", what: "reads a file" },
  { name: "orderfile", kind: "read", what: "reads a file" },
  { name: "body-file", kind: "read", what: "reads a file" },
];

/** Short options of git subcommands whose value is a file that is read (`git commit -F msg`, `git diff -Ofile`, `git grep -f pats`). */
const GIT_SHORT_READS: Record<string, string> = { commit: "F", tag: "F", notes: "F", "merge": "F", diff: "O", log: "O", show: "O", grep: "f" };

/**
 * git: strips global options so `git -C dir --no-pager log -1` matches `git log *`. Global
 * options that change the configuration, repository or programs git uses ask; `-C` and the
 * subcommand's paths are read; file-writing, file-reading and program-running options of the
 * subcommand are found in any abbreviation; `REV:path` names a path too (`git show HEAD:.env`
 * prints .env). `git diff` reads every operand as a path: outside a repository, or when a path
 * lies outside it, it compares the files themselves (an implicit `--no-index`).
 * The repository git will use is checked by the caller (lib/policy/git-repo.ts), from `gitDir`.
 */
function gitEffects(tokens: ArgvToken[]): { normalized: ArgvToken[]; effects: Effects } {
  const effects = noEffects();
  let dir: string | null = "";
  let i = 0;
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null) {
      effects.floors.push(ask("unclassifiable: git option not static"));
      dir = null;
      break;
    }
    if (!v.startsWith("-")) break;
    const eq = v.indexOf("=");
    const name = v.startsWith("--") && eq !== -1 ? v.slice(0, eq) : /^-[Cc]./.test(v) ? v.slice(0, 2) : v;
    const attached = v.startsWith("--") && eq !== -1 ? v.slice(eq + 1) : /^-[Cc]./.test(v) ? v.slice(2) : null;
    if (!GIT_GLOBAL_VALUE.has(name) && !GIT_GLOBAL_FLAGS.has(name)) {
      effects.floors.push(ask(`git ${name} is not an option the policy knows for git`));
      continue;
    }
    const value = !GIT_GLOBAL_VALUE.has(name) ? attached : (attached ?? tokens[++i]?.value ?? null);
    if (Object.hasOwn(GIT_GLOBAL_ASKS, name) && !(name === "--exec-path" && value === null)) effects.floors.push(ask(`git ${name}: ${GIT_GLOBAL_ASKS[name]}`));
    if (name === "-C") {
      if (value === null || dir === null) dir = null;
      else if (value !== "") dir = value.startsWith("/") || dir === "" ? value : `${dir}/${value}`;
    }
    if ((name === "--git-dir" || name === "--work-tree") && value !== null) effects.reads.push(value);
  }
  const sub = tokens.slice(i);
  const subName = sub[0]?.value ?? null;
  const inDir = (p: string): string => (dir && !p.startsWith("/") ? `${dir}/${p}` : p);
  if (dir) effects.reads.push(dir);
  effects.gitDir = dir;
  const shortRead = subName !== null && Object.hasOwn(GIT_SHORT_READS, subName) ? GIT_SHORT_READS[subName] : null;
  const operands: string[] = [];
  let onlyOperands = false;
  for (let j = 1; j < sub.length; j++) {
    const v = sub[j].value;
    if (v === null) continue;
    if (onlyOperands || !v.startsWith("-") || v === "-") {
      operands.push(v);
      continue;
    }
    if (v === "--") {
      onlyOperands = true;
      continue;
    }
    if (v.startsWith("--")) {
      const eq = v.indexOf("=");
      const written = eq === -1 ? v.slice(2) : v.slice(2, eq);
      const risky = written.length > 0 ? GIT_RISKY_LONG.find((r) => r.name.startsWith(written)) : undefined;
      if (!risky) continue;
      const value = eq !== -1 ? v.slice(eq + 1) : risky.kind === "reads-any" || risky.kind === "runs" ? null : (sub[++j]?.value ?? null);
      const what = `git ${subName ?? ""} --${risky.name}${written !== risky.name ? ` (written --${written})` : ""}`;
      if (risky.kind === "write") {
        if (value !== null) effects.writes.push(inDir(value));
        else effects.floors.push(ask(`${what}: ${risky.what}`));
      } else if (risky.kind === "read") {
        if (value !== null) effects.reads.push(inDir(value));
        else effects.floors.push(ask(`${what}: ${risky.what} that is not known before the command runs`));
      } else {
        effects.floors.push(ask(`${what}: ${risky.what}`));
      }
      continue;
    }
    // Short options: only the file-reading ones of this subcommand matter here.
    if (shortRead && v.length >= 2 && v[1] === shortRead) {
      const value = v.length > 2 ? v.slice(2) : (sub[++j]?.value ?? null);
      if (value !== null && value !== "-") effects.reads.push(inDir(value));
    }
    if (subName === "grep" && /^-[A-Za-z]*O/.test(v)) effects.floors.push(ask("git grep -O: runs a pager program"));
  }
  const pathspecs = subName !== null && GIT_PATHSPEC_READERS.has(subName);
  for (const op of operands) {
    if (subName === "diff") effects.reads.push(inDir(op));
    else if (pathspecs) gitPathspec(op, inDir, effects);
    if (/^[\w+.-]+:\/\//.test(op) || /^[\w.-]+@[\w.-]+:/.test(op)) continue; // a URL or scp-like remote (user@host:path)
    for (const p of revisionPaths(op)) effects.reads.push(inDir(p));
  }
  if (subName === "grep") {
    effects.walks = [{ root: dir || ".", via: "git grep", skipHidden: false, skipDirs: [".git"], excludeFiles: [], includeFiles: [] }];
  }
  return { normalized: sub, effects };
}

/**
 * git subcommands whose operands may be pathspecs of files whose content (or history of it) they
 * print: `git log -p -- .env`, `git blame .env`. Every operand is taken as a path (a revision
 * name matches no sensitive rule, so this costs nothing when it is one).
 */
const GIT_PATHSPEC_READERS = new Set(["log", "show", "blame", "annotate", "grep", "cat-file", "shortlog", "whatchanged", "format-patch", "archive", "ls-tree", "ls-files", "rev-list", "difftool", "range-diff", "diff-tree", "diff-index", "diff-files"]);

/**
 * The paths a `REV:path` or index form can name (gitrevisions(7)): `HEAD:.env`, `:.env`,
 * `:0:.env`, `@:.env`, `HEAD~1:.env`, `<sha>:path`, `:/message:path`-like spellings. Every text
 * after a colon is a candidate (cheap, and no spelling is missed); `./` is dropped, and a
 * `:/message` search (a leading "/") names a commit, not a file.
 */
function revisionPaths(op: string): string[] {
  const out: string[] = [];
  for (let c = op.indexOf(":"); c !== -1; c = op.indexOf(":", c + 1)) {
    const p = op.slice(c + 1).replace(/^(\.\/)+/, "");
    if (p !== "" && !p.startsWith(":") && !p.startsWith("/")) out.push(p);
  }
  return out;
}

/**
 * A pathspec operand (gitglossary(7) "pathspec"): magic (`:(top).env`, `:/.env`, `:!x`,
 * `:(glob)**\/.env`, `:(literal)…`) is stripped to the path it names; a pathspec with wildcards
 * (`*`, `?`, `[`; git matches them across "/") is a recursive read of its fixed leading
 * directories, walked and checked file by file.
 */
function gitPathspec(op: string, inDir: (p: string) => string, effects: Effects): void {
  let p = op;
  let literal = false;
  const long = /^:\(([^)]*)\)/.exec(p);
  if (long) {
    literal = /(^|,)literal(,|$)/.test(long[1]);
    p = p.slice(long[0].length);
  } else if (p.startsWith(":")) {
    p = p.replace(/^:[/!^]*:?/, "");
  }
  p = p.replace(/^(\.\/)+/, "");
  if (p === "") return;
  if (!literal && /[*?[\\]/.test(p)) {
    const fixed = p.slice(0, p.search(/[*?[\\]/));
    const root = fixed.includes("/") ? fixed.slice(0, fixed.lastIndexOf("/")) : ".";
    (effects.walks ??= []).push({ root: inDir(root), via: `git pathspec ${op}`, skipHidden: false, skipDirs: [".git"], excludeFiles: [], includeFiles: [] });
    return;
  }
  effects.reads.push(inDir(p));
}

/**
 * find: starting points are read (written with -delete); -exec/-execdir/-ok/-okdir run the
 * command that follows (classified as its own part); -fprint* write files (GNU find manual).
 */
function findEffects(tokens: ArgvToken[]): { effects: Effects; inner: ArgvToken[][] } {
  const effects = noEffects();
  const inner: ArgvToken[][] = [];
  let i = 0;
  while (i < tokens.length && tokens[i].value !== null && /^-[HLP]$|^-D$|^-O\d*$/.test(tokens[i].value!)) {
    if (tokens[i].value === "-L") effects.floors.push(ask(FOLLOWS_LINKS("find -L")));
    i += tokens[i].value === "-D" ? 2 : 1;
  }
  const starts: string[] = [];
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null || v.startsWith("-") || v === "(" || v === "!" || v === ",") break;
    starts.push(v);
  }
  if (starts.length === 0) starts.push(".");
  let deletes = false;
  for (; i < tokens.length; i++) {
    const v = tokens[i].value;
    if (v === null) continue;
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(v)) {
      const cmd: ArgvToken[] = [];
      for (i++; i < tokens.length && tokens[i].value !== ";" && tokens[i].value !== "+"; i++) {
        const t = tokens[i];
        cmd.push(t.value !== null && t.value.includes("{}") ? { value: null, glob: false } : t);
      }
      effects.floors.push(ask(`find ${v}: runs ${cmd[0]?.value ?? "a command"}`));
      if (cmd.length) inner.push(cmd);
    } else if (v === "-follow") {
      effects.floors.push(ask(FOLLOWS_LINKS("find -follow")));
    } else if (v === "-delete") {
      deletes = true;
    } else if (v === "-files0-from") {
      const list = tokens[i + 1]?.value ?? null;
      if (list !== null && list !== "-") effects.reads.push(list);
      effects.floors.push(ask(`find -files0-from: takes the starting points from ${list ?? "a file"}, which the policy cannot check`));
    } else if (["-newer", "-anewer", "-cnewer", "-samefile"].includes(v) || /^-newer[acmBt][acmBt]$/.test(v)) {
      const ref = tokens[i + 1]?.value;
      if (ref != null) effects.reads.push(ref);
    } else if (["-fprint", "-fprint0", "-fls", "-fprintf"].includes(v)) {
      const target = tokens[i + 1]?.value;
      if (target != null) effects.writes.push(target);
      effects.floors.push(ask(`find ${v}: writes a file`));
    }
  }
  if (deletes) {
    effects.floors.push(ask("find -delete: deletes files"));
    effects.writes.push(...starts);
  } else {
    effects.reads.push(...starts);
  }
  return { effects, inner };
}

/** Any spelling of a process environment file (`/proc/self/environ`, `/proc/1/task/1/environ`), after lexical normalisation (`/proc/1/./environ`). */
const PROC_ENVIRON = /^\/proc\/[^/]*\/(task\/[^/]*\/)?environ$/;

function isProcEnviron(value: string): boolean {
  return value.startsWith("/") && PROC_ENVIRON.test(path.posix.normalize(value));
}

/** Why following symlinks during a recursive walk asks: a link inside the workspace can lead anywhere. */
const FOLLOWS_LINKS = (what: string) => `${what}: follows symlinks while recursing, which can lead out of the workspace`;

/**
 * Options that make a recursive reader follow every symlink it meets (GNU grep -R, ripgrep -L,
 * du -L, tree -l, ls -RL). The paths a command names are checked physically, but links found
 * during the walk are not, so these ask.
 */
const LINK_FOLLOWING: Record<string, (o: Option[]) => boolean> = {
  grep: (o) => has(o, "R", "dereference-recursive"),
  egrep: (o) => has(o, "R", "dereference-recursive"),
  fgrep: (o) => has(o, "R", "dereference-recursive"),
  rg: (o) => has(o, "L", "follow"),
  du: (o) => has(o, "L", "dereference"),
  tree: (o) => has(o, "l", "follow"),
  ls: (o) => has(o, "R", "recursive") && has(o, "L", "dereference"),
};

/** curl accepts `--no-OPTION` for every boolean option: such a word only turns a flag off. */
function withoutCurlNegations(tokens: ArgvToken[]): ArgvToken[] {
  return tokens.filter((t) => {
    const m = t.value === null ? null : /^--no-([^=]+)$/.exec(t.value);
    if (!m || resolveLong(CURL_SPEC, `no-${m[1]}`).ok) return true;
    const r = resolveLong(CURL_SPEC, m[1]);
    return !(r.ok && r.kind === "none");
  });
}

/** The effects of a program that is not a wrapper, and its argv for rule matching. */
function programEffects(name: string | null, argv: Argv): ProgramResult {
  const rest = argv.tokens.slice(1);
  let effects = noEffects();
  let normalized = argv;
  const inner: ArgvToken[][] = [];
  if (name === null) return { normalized, effects, inner };
  if (SHELL_NAMES.has(name)) {
    // `sh -c STRING`: the string is parsed and classified like the outer line.
    effects = shellEffects(rest, name);
  } else if (name === "git") {
    const g = gitEffects(rest);
    effects = g.effects;
    normalized = { tokens: [argv.tokens[0], ...g.normalized], openEnded: argv.openEnded };
  } else if (name === "find") {
    const f = findEffects(rest);
    effects = f.effects;
    inner.push(...f.inner);
  } else if (name === "gh" || name === "http" || name === "https" || name === "xh" || name === "scp") {
    uploaderEffects(name, rest, effects);
  } else if (Object.hasOwn(PROGRAMS, name)) {
    const program = PROGRAMS[name];
    const parsed = parseFor(name, name === "curl" ? withoutCurlNegations(rest) : rest, program.spec, effects);
    program.effects(parsed, rest, effects);
    if (Object.hasOwn(FILE_LIST_OPTIONS, name)) {
      const lists = values(parsed.options, FILE_LIST_OPTIONS[name].short, ...FILE_LIST_OPTIONS[name].long);
      for (const list of lists) effects.floors.push(ask(`${name}: takes the names of the files to read from ${list ?? "a file"}, which the policy cannot check`));
      effects.reads.push(...known(lists).filter((l) => l !== "-"));
    }
    if (Object.hasOwn(LINK_FOLLOWING, name) && LINK_FOLLOWING[name](parsed.options)) effects.floors.push(ask(FOLLOWS_LINKS(`${name}`)));
  }
  for (const t of rest) {
    if (t.value !== null && isProcEnviron(t.value)) effects.floors.push(ask(`${name}: reads a process environment (${t.value})`));
  }
  if (OPTION_SENSITIVE.has(name)) {
    if (rest.some((t) => t.glob && t.value !== null && /^[*?[]/.test(t.value))) effects.floors.push(ask(`${name}: a glob may expand to an option`));
    if (argv.openEnded) effects.floors.push(ask(`${name}: xargs may add options`));
  }
  return { normalized, effects, inner };
}
