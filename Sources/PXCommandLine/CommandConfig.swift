import PX
import PXCore
import PXPlaces

/// The config file as a command reads it: once a process, at its first use (``PX/config()``, the one place
/// ``PXConfig/load()`` is called, the library's and the commands' alike), then the same value for every part
/// of the command (the peer's backend, its connection, its identity, px-sync's places), so a file that changes
/// while a command runs cannot give two parts two answers. A command that never needs the config (px-dump,
/// px-listen without a named node) never reads it, so a broken file cannot fail it.
public enum CommandConfig {
    /// The config, read on the first call.
    /// - Throws: what ``PXConfig/load()`` threw, on this call and every later one.
    public static func value() throws(PXError) -> PXConfig {
        try PX.config()
    }
}
