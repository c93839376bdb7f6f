fn main() {
    std::process::exit(secopt::cli::main());
}
